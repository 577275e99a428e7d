-- +goose Up
-- Two environments, two numberings (issue 29): the SII numbers folios
-- from 1 in certificacion and again in produccion. A document records the
-- environment it was emitted in (its CAF's), and its folio is unique
-- within that environment only; an Idempotency-Key is one key within one
-- environment. SQLite cannot change a table's constraints in place, so
-- dtes and idempotency_keys are rebuilt (nothing refers to either).
-- Existing documents take their CAF's environment, or the company's when
-- the CAF is unknown; existing keys their document's, or the company's.
-- Envelopes written before their environment was kept take their first
-- document's.

CREATE TABLE dtes_new (
    seq                   INTEGER PRIMARY KEY AUTOINCREMENT,
    id                    TEXT    NOT NULL UNIQUE,
    empresa_id            TEXT    NOT NULL REFERENCES empresas (id),
    ambiente              TEXT    NOT NULL DEFAULT '',
    tipo_dte              INTEGER NOT NULL,
    folio                 INTEGER NOT NULL,
    caf_id                TEXT    NOT NULL DEFAULT '',
    estado                TEXT    NOT NULL,
    rut_receptor          TEXT    NOT NULL DEFAULT '',
    razon_social_receptor TEXT    NOT NULL DEFAULT '',
    fecha_emision         TEXT    NOT NULL DEFAULT '',
    monto_total           INTEGER NOT NULL DEFAULT 0,
    auto_send             INTEGER NOT NULL DEFAULT 0,
    request               BLOB,
    emisor                BLOB,
    emitted_at            TEXT,
    xml                   BLOB,
    totals                BLOB,
    tracking              BLOB,
    sii_status            BLOB,
    metadata              BLOB,
    created_at            TEXT    NOT NULL,
    updated_at            TEXT    NOT NULL,
    intercambio           BLOB,
    CONSTRAINT dtes_folio UNIQUE (empresa_id, ambiente, tipo_dte, folio)
);
INSERT INTO dtes_new (seq, id, empresa_id, ambiente, tipo_dte, folio, caf_id, estado, rut_receptor, razon_social_receptor,
    fecha_emision, monto_total, auto_send, request, emisor, emitted_at, xml, totals, tracking, sii_status, metadata,
    created_at, updated_at, intercambio)
SELECT d.seq, d.id, d.empresa_id,
    COALESCE((SELECT c.ambiente FROM cafs c WHERE c.id = d.caf_id AND c.empresa_id = d.empresa_id AND c.ambiente <> ''),
             (SELECT e.ambiente FROM empresas e WHERE e.id = d.empresa_id), ''),
    d.tipo_dte, d.folio, d.caf_id, d.estado, d.rut_receptor, d.razon_social_receptor,
    d.fecha_emision, d.monto_total, d.auto_send, d.request, d.emisor, d.emitted_at, d.xml, d.totals, d.tracking, d.sii_status, d.metadata,
    d.created_at, d.updated_at, d.intercambio
FROM dtes d;
DROP TABLE dtes;
ALTER TABLE dtes_new RENAME TO dtes;
CREATE INDEX dtes_empresa_seq ON dtes (empresa_id, seq);
CREATE INDEX dtes_empresa_ambiente_seq ON dtes (empresa_id, ambiente, seq);

CREATE TABLE idempotency_keys_new (
    empresa_id      TEXT    NOT NULL REFERENCES empresas (id),
    ambiente        TEXT    NOT NULL DEFAULT '',
    idem_key        TEXT    NOT NULL,
    body_hash       BLOB,
    state           TEXT    NOT NULL,
    dte_id          TEXT    NOT NULL DEFAULT '',
    response_status INTEGER NOT NULL DEFAULT 0,
    response_body   BLOB,
    created_at      TEXT    NOT NULL,
    updated_at      TEXT    NOT NULL,
    PRIMARY KEY (empresa_id, ambiente, idem_key)
);
INSERT INTO idempotency_keys_new (empresa_id, ambiente, idem_key, body_hash, state, dte_id, response_status, response_body, created_at, updated_at)
SELECT i.empresa_id,
    COALESCE((SELECT d.ambiente FROM dtes d WHERE d.id = i.dte_id AND d.empresa_id = i.empresa_id),
             (SELECT e.ambiente FROM empresas e WHERE e.id = i.empresa_id), ''),
    i.idem_key, i.body_hash, i.state, i.dte_id, i.response_status, i.response_body, i.created_at, i.updated_at
FROM idempotency_keys i;
DROP TABLE idempotency_keys;
ALTER TABLE idempotency_keys_new RENAME TO idempotency_keys;
CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);

UPDATE envios SET ambiente = COALESCE((SELECT d.ambiente FROM dtes d
    WHERE d.empresa_id = envios.empresa_id AND d.id = json_extract(envios.dte_ids, '$[0]')), '')
WHERE ambiente = '';
CREATE INDEX envios_empresa_ambiente_seq ON envios (empresa_id, ambiente, seq);

-- +goose Down
-- Going back fails when a company has documents (or keys) of the same
-- type and folio (or key) in both environments: the old rule cannot hold
-- them.
DROP INDEX envios_empresa_ambiente_seq;

CREATE TABLE idempotency_keys_old (
    empresa_id      TEXT    NOT NULL REFERENCES empresas (id),
    idem_key        TEXT    NOT NULL,
    body_hash       BLOB,
    state           TEXT    NOT NULL,
    dte_id          TEXT    NOT NULL DEFAULT '',
    response_status INTEGER NOT NULL DEFAULT 0,
    response_body   BLOB,
    created_at      TEXT    NOT NULL,
    updated_at      TEXT    NOT NULL,
    PRIMARY KEY (empresa_id, idem_key)
);
INSERT INTO idempotency_keys_old (empresa_id, idem_key, body_hash, state, dte_id, response_status, response_body, created_at, updated_at)
SELECT empresa_id, idem_key, body_hash, state, dte_id, response_status, response_body, created_at, updated_at FROM idempotency_keys;
DROP TABLE idempotency_keys;
ALTER TABLE idempotency_keys_old RENAME TO idempotency_keys;
CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);

CREATE TABLE dtes_old (
    seq                   INTEGER PRIMARY KEY AUTOINCREMENT,
    id                    TEXT    NOT NULL UNIQUE,
    empresa_id            TEXT    NOT NULL REFERENCES empresas (id),
    tipo_dte              INTEGER NOT NULL,
    folio                 INTEGER NOT NULL,
    caf_id                TEXT    NOT NULL DEFAULT '',
    estado                TEXT    NOT NULL,
    rut_receptor          TEXT    NOT NULL DEFAULT '',
    razon_social_receptor TEXT    NOT NULL DEFAULT '',
    fecha_emision         TEXT    NOT NULL DEFAULT '',
    monto_total           INTEGER NOT NULL DEFAULT 0,
    auto_send             INTEGER NOT NULL DEFAULT 0,
    request               BLOB,
    emisor                BLOB,
    emitted_at            TEXT,
    xml                   BLOB,
    totals                BLOB,
    tracking              BLOB,
    sii_status            BLOB,
    metadata              BLOB,
    created_at            TEXT    NOT NULL,
    updated_at            TEXT    NOT NULL,
    intercambio           BLOB,
    CONSTRAINT dtes_folio UNIQUE (empresa_id, tipo_dte, folio)
);
INSERT INTO dtes_old (seq, id, empresa_id, tipo_dte, folio, caf_id, estado, rut_receptor, razon_social_receptor,
    fecha_emision, monto_total, auto_send, request, emisor, emitted_at, xml, totals, tracking, sii_status, metadata,
    created_at, updated_at, intercambio)
SELECT seq, id, empresa_id, tipo_dte, folio, caf_id, estado, rut_receptor, razon_social_receptor,
    fecha_emision, monto_total, auto_send, request, emisor, emitted_at, xml, totals, tracking, sii_status, metadata,
    created_at, updated_at, intercambio
FROM dtes;
DROP TABLE dtes;
ALTER TABLE dtes_old RENAME TO dtes;
CREATE INDEX dtes_empresa_seq ON dtes (empresa_id, seq);
