-- +goose Up
-- A received file is an EnvioDTE from a supplier ('envio') or an answer a
-- customer sent about the company's own documents ('respuesta': a
-- RespuestaDTE or EnvioRecibos, kept with what it changed or why it was
-- refused). Files received before were all envelopes.
ALTER TABLE recepciones ADD COLUMN tipo TEXT NOT NULL DEFAULT 'envio';

-- +goose Down
ALTER TABLE recepciones DROP COLUMN tipo;
