-- +goose Up
-- Two environments, two numberings (issue 29): the SII numbers folios
-- from 1 in certificacion and again in produccion. A document records the
-- environment it was emitted in (its CAF's), and its folio is unique
-- within that environment only; an Idempotency-Key is one key within one
-- environment. Existing documents take their CAF's environment, or the
-- company's when the CAF is unknown; existing keys their document's, or
-- the company's. Envelopes written before their environment was kept take
-- their first document's.
ALTER TABLE dtes ADD COLUMN ambiente TEXT NOT NULL DEFAULT '';
UPDATE dtes d SET ambiente = COALESCE(
    (SELECT c.ambiente FROM cafs c WHERE c.id = d.caf_id AND c.empresa_id = d.empresa_id AND c.ambiente <> ''),
    (SELECT e.ambiente FROM empresas e WHERE e.id = d.empresa_id), '');
ALTER TABLE dtes DROP CONSTRAINT dtes_folio;
ALTER TABLE dtes ADD CONSTRAINT dtes_folio UNIQUE (empresa_id, ambiente, tipo_dte, folio);
CREATE INDEX dtes_empresa_ambiente_seq ON dtes (empresa_id, ambiente, seq);

ALTER TABLE idempotency_keys ADD COLUMN ambiente TEXT NOT NULL DEFAULT '';
UPDATE idempotency_keys i SET ambiente = COALESCE(
    (SELECT d.ambiente FROM dtes d WHERE d.id = i.dte_id AND d.empresa_id = i.empresa_id),
    (SELECT e.ambiente FROM empresas e WHERE e.id = i.empresa_id), '');
ALTER TABLE idempotency_keys DROP CONSTRAINT idempotency_keys_pkey;
ALTER TABLE idempotency_keys ADD PRIMARY KEY (empresa_id, ambiente, idem_key);

UPDATE envios SET ambiente = COALESCE((SELECT d.ambiente FROM dtes d
    WHERE d.empresa_id = envios.empresa_id AND d.id = (envios.dte_ids::jsonb ->> 0)), '')
WHERE ambiente = '';
CREATE INDEX envios_empresa_ambiente_seq ON envios (empresa_id, ambiente, seq);

-- +goose Down
-- Going back fails when a company has documents (or keys) of the same
-- type and folio (or key) in both environments: the old rule cannot hold
-- them.
DROP INDEX envios_empresa_ambiente_seq;
ALTER TABLE idempotency_keys DROP CONSTRAINT idempotency_keys_pkey;
ALTER TABLE idempotency_keys ADD PRIMARY KEY (empresa_id, idem_key);
ALTER TABLE idempotency_keys DROP COLUMN ambiente;
DROP INDEX dtes_empresa_ambiente_seq;
ALTER TABLE dtes DROP CONSTRAINT dtes_folio;
ALTER TABLE dtes ADD CONSTRAINT dtes_folio UNIQUE (empresa_id, tipo_dte, folio);
ALTER TABLE dtes DROP COLUMN ambiente;
