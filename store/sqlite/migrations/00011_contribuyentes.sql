-- +goose Up
-- The SII's public list of authorized electronic issuers with their
-- intercambio addresses (issue 29): one list for the whole database, not
-- per company. Each import is a contribuyentes_listas row and its
-- companies; the current list is the complete one with the highest id,
-- and older lists are deleted a batch at a time once a new one is
-- complete. Times are kept as in 00001.

CREATE TABLE contribuyentes_listas (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    origen       TEXT    NOT NULL DEFAULT '',
    filas        INTEGER NOT NULL DEFAULT 0,
    completa     INTEGER NOT NULL DEFAULT 0,
    created_at   TEXT    NOT NULL,
    completed_at TEXT
);

CREATE TABLE contribuyentes (
    lista_id          INTEGER NOT NULL REFERENCES contribuyentes_listas (id),
    rut               TEXT    NOT NULL,
    razon_social      TEXT    NOT NULL DEFAULT '',
    numero_resolucion INTEGER NOT NULL DEFAULT 0,
    fecha_resolucion  TEXT    NOT NULL DEFAULT '',
    correo            TEXT    NOT NULL DEFAULT '',
    url               TEXT    NOT NULL DEFAULT '',
    PRIMARY KEY (lista_id, rut)
) WITHOUT ROWID;

-- +goose Down
DROP TABLE contribuyentes;
DROP TABLE contribuyentes_listas;
