-- +goose Up
-- Received documents keep their environment (issue 29): the SII numbers
-- folios from 1 in certificacion and again in produccion, so a supplier's
-- test document and its real one may share emitter, type and folio. A
-- received file (recepcion) and each document read from it (recibido)
-- record the environment they belong to; the service deduplicates
-- readable documents (emitter, type and folio: keys 'dte:…') within one
-- environment, so their dedupe_key begins with the environment's name
-- (keys by digest name the same bytes in either). Rows recorded before
-- take their company's current environment.
ALTER TABLE recepciones ADD COLUMN ambiente TEXT NOT NULL DEFAULT '';
ALTER TABLE recibidos ADD COLUMN ambiente TEXT NOT NULL DEFAULT '';
UPDATE recepciones r SET ambiente = COALESCE((SELECT e.ambiente FROM empresas e WHERE e.id = r.empresa_id), '');
UPDATE recibidos r SET ambiente = COALESCE((SELECT e.ambiente FROM empresas e WHERE e.id = r.empresa_id), '');
UPDATE recibidos SET dedupe_key = ambiente || ':' || dedupe_key WHERE dedupe_key LIKE 'dte:%';
CREATE INDEX recepciones_empresa_ambiente_seq ON recepciones (empresa_id, ambiente, seq);
CREATE INDEX recibidos_empresa_ambiente_seq ON recibidos (empresa_id, ambiente, seq);

-- +goose Down
-- Going back fails when a company received documents of the same
-- emitter, type and folio in both environments: the old rule cannot hold
-- them.
DROP INDEX recibidos_empresa_ambiente_seq;
DROP INDEX recepciones_empresa_ambiente_seq;
UPDATE recibidos SET dedupe_key = substr(dedupe_key, length(ambiente) + 2)
WHERE substr(dedupe_key, 1, length(ambiente) + 5) = ambiente || ':dte:';
ALTER TABLE recibidos DROP COLUMN ambiente;
ALTER TABLE recepciones DROP COLUMN ambiente;
