-- +goose Up
-- The SII office printed on the company's documents, and its logo (a
-- PNG or JPEG the service has re-encoded), kept apart from the company's
-- row so that reading a company does not read its logo.
ALTER TABLE empresas ADD COLUMN oficina_sii TEXT NOT NULL DEFAULT '';
CREATE TABLE empresa_logos (
    empresa_id   TEXT NOT NULL PRIMARY KEY REFERENCES empresas (id),
    content_type TEXT NOT NULL,
    data         BLOB NOT NULL
);

-- +goose Down
DROP TABLE empresa_logos;
ALTER TABLE empresas DROP COLUMN oficina_sii;
