-- +goose Up
-- Issue 35. cesiones keeps each cesión of a company's document to a
-- factoring company (the SII's registry of credit transfers, RTC): the
-- request as accepted, the AEC built and signed once (a second upload
-- sends the same bytes), the registry's track id and answer, and its
-- state. A document has at most one cesión that is not rechazada: the
-- partial unique index refuses a second one, so a crash or a double POST
-- can never make two. Times are kept as in 00001.
CREATE TABLE cesiones (
    seq            INTEGER PRIMARY KEY AUTOINCREMENT,
    id             TEXT    NOT NULL UNIQUE,
    empresa_id     TEXT    NOT NULL REFERENCES empresas (id),
    dte_id         TEXT    NOT NULL REFERENCES dtes (id),
    ambiente       TEXT    NOT NULL DEFAULT '',
    estado         TEXT    NOT NULL,
    rut_cesionario TEXT    NOT NULL DEFAULT '',
    monto          INTEGER NOT NULL DEFAULT 0,
    request        BLOB,
    aec            BLOB,
    track_id       TEXT    NOT NULL DEFAULT '',
    attempts       INTEGER NOT NULL DEFAULT 0,
    codigo         TEXT    NOT NULL DEFAULT '',
    glosa          TEXT    NOT NULL DEFAULT '',
    response       BLOB,
    created_at     TEXT    NOT NULL,
    updated_at     TEXT    NOT NULL
);
CREATE UNIQUE INDEX cesiones_activa ON cesiones (empresa_id, dte_id) WHERE estado <> 'rechazada';
CREATE INDEX cesiones_empresa_dte_seq ON cesiones (empresa_id, dte_id, seq);

-- +goose Down
DROP TABLE cesiones;
