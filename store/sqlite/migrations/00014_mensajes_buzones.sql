-- +goose Up
-- Issue 30. A mail read from a mailbox is recognized again by its digest
-- alone: a different message that reuses a Message-ID is a message of its
-- own, not a repeat, so the unique index on (empresa_id, message_id)
-- goes (the digest's unique constraint stays).
--
-- buzones keeps what the reader knows of each company's mailbox: the
-- reads failed in a row, the category of the last failure, when the
-- last read was tried and when one last worked, and the time before
-- which no periodic read runs (the backoff). Times are kept as in 00001.
-- Going back fails on a database that holds two messages of one company
-- with the same Message-ID, which this migration allows.
DROP INDEX IF EXISTS mensajes_message_id;

CREATE TABLE IF NOT EXISTS buzones (
    empresa_id       TEXT    NOT NULL PRIMARY KEY REFERENCES empresas (id),
    fallos           INTEGER NOT NULL DEFAULT 0,
    ultimo_error     TEXT    NOT NULL DEFAULT '',
    ultimo_intento   TEXT,
    ultima_lectura   TEXT,
    proximo          TEXT,
    updated_at       TEXT NOT NULL
);

-- +goose Down
DROP TABLE buzones;
CREATE UNIQUE INDEX mensajes_message_id ON mensajes (empresa_id, message_id) WHERE message_id <> '';
