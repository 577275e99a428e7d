-- +goose Up
-- The web console's sessions, shared by every process on the database so
-- that a browser signed in on one is signed in on all, and a sign-out on
-- one ends the session everywhere. id is the SHA-256 (hex) of the random
-- id the browser keeps, never the id itself; sealed_credential is the
-- credential sealed under the key-encryption key, bound to the company
-- and the id. last_seen is recorded at a coarse grain (the console writes
-- it at most once a minute per session). Times are kept as in 00001 (TIMESTAMPTZ).
CREATE TABLE console_sesiones (
    id                TEXT NOT NULL PRIMARY KEY,
    empresa_id        TEXT NOT NULL REFERENCES empresas (id),
    actua             TEXT NOT NULL DEFAULT '',
    sealed_credential BYTEA,
    csrf              TEXT NOT NULL,
    created_at        TIMESTAMPTZ NOT NULL,
    last_seen         TIMESTAMPTZ NOT NULL
);
CREATE INDEX console_sesiones_empresa ON console_sesiones (empresa_id, created_at);
CREATE INDEX console_sesiones_last_seen ON console_sesiones (last_seen);
CREATE INDEX console_sesiones_created ON console_sesiones (created_at);

-- +goose Down
DROP TABLE console_sesiones;
