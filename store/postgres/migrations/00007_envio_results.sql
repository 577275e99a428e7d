-- +goose Up
-- An envelope's environment (its documents', so one held in certificacion
-- goes to the certification SII even after the company moved to
-- produccion) and each of its documents' result, for envelopes of several
-- documents. Rows written before keep '' and NULL: the service derives
-- them from the envelope's documents.
ALTER TABLE envios ADD COLUMN ambiente TEXT NOT NULL DEFAULT '';
ALTER TABLE envios ADD COLUMN results BYTEA;

-- +goose Down
ALTER TABLE envios DROP COLUMN results;
ALTER TABLE envios DROP COLUMN ambiente;
