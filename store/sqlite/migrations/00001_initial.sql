-- +goose Up
-- Times are TEXT in UTC, fixed width with microseconds
-- (2006-01-02T15:04:05.000000Z), so they sort as they compare. JSON
-- documents and sealed secrets are BLOBs the store does not interpret.
-- seq orders keyset pages; id is the public UUID.

CREATE TABLE empresas (
    seq               INTEGER PRIMARY KEY AUTOINCREMENT,
    id                TEXT    NOT NULL UNIQUE,
    rut               TEXT    NOT NULL,
    razon_social      TEXT    NOT NULL DEFAULT '',
    giro              TEXT    NOT NULL DEFAULT '',
    direccion         TEXT    NOT NULL DEFAULT '',
    comuna            TEXT    NOT NULL DEFAULT '',
    ciudad            TEXT    NOT NULL DEFAULT '',
    ambiente          TEXT    NOT NULL,
    fecha_resolucion  TEXT    NOT NULL DEFAULT '',
    numero_resolucion INTEGER NOT NULL DEFAULT 0,
    inbound_email     TEXT    NOT NULL DEFAULT '',
    inbound_status    TEXT    NOT NULL DEFAULT '',
    acteco            TEXT    NOT NULL DEFAULT '[]',
    created_at        TEXT    NOT NULL,
    updated_at        TEXT    NOT NULL,
    CONSTRAINT empresas_rut_ambiente UNIQUE (rut, ambiente)
);

CREATE TABLE certificados (
    empresa_id        TEXT    PRIMARY KEY REFERENCES empresas (id),
    rut_firmante      TEXT    NOT NULL DEFAULT '',
    subject           TEXT    NOT NULL DEFAULT '',
    fecha_vencimiento TEXT,
    sealed            BLOB    NOT NULL,
    is_active         INTEGER NOT NULL DEFAULT 1,
    uploaded_at       TEXT    NOT NULL
);

CREATE TABLE cafs (
    seq                INTEGER PRIMARY KEY AUTOINCREMENT,
    id                 TEXT    NOT NULL UNIQUE,
    empresa_id         TEXT    NOT NULL REFERENCES empresas (id),
    tipo_dte           INTEGER NOT NULL,
    folio_desde        INTEGER NOT NULL,
    folio_hasta        INTEGER NOT NULL,
    next_folio         INTEGER NOT NULL,
    ambiente           TEXT    NOT NULL DEFAULT '',
    fecha_autorizacion TEXT    NOT NULL DEFAULT '',
    xml                BLOB,
    is_active          INTEGER NOT NULL DEFAULT 1,
    created_at         TEXT    NOT NULL,
    CHECK (folio_desde >= 1 AND folio_hasta >= folio_desde),
    CHECK (next_folio >= folio_desde AND next_folio <= folio_hasta + 1)
);
CREATE INDEX cafs_empresa_tipo ON cafs (empresa_id, tipo_dte, folio_desde);

CREATE TABLE dtes (
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
    CONSTRAINT dtes_folio UNIQUE (empresa_id, tipo_dte, folio)
);
CREATE INDEX dtes_empresa_seq ON dtes (empresa_id, seq);

CREATE TABLE clientes (
    seq          INTEGER PRIMARY KEY AUTOINCREMENT,
    id           TEXT NOT NULL UNIQUE,
    empresa_id   TEXT NOT NULL REFERENCES empresas (id),
    rut          TEXT NOT NULL,
    razon_social TEXT NOT NULL DEFAULT '',
    giro         TEXT NOT NULL DEFAULT '',
    direccion    TEXT NOT NULL DEFAULT '',
    comuna       TEXT NOT NULL DEFAULT '',
    ciudad       TEXT NOT NULL DEFAULT '',
    email        TEXT NOT NULL DEFAULT '',
    telefono     TEXT NOT NULL DEFAULT '',
    contacto     TEXT NOT NULL DEFAULT '',
    notas        TEXT NOT NULL DEFAULT '',
    created_at   TEXT NOT NULL,
    updated_at   TEXT NOT NULL,
    deleted_at   TEXT
);
CREATE UNIQUE INDEX clientes_rut ON clientes (empresa_id, rut) WHERE deleted_at IS NULL;
CREATE INDEX clientes_empresa_seq ON clientes (empresa_id, seq);

CREATE TABLE productos (
    seq             INTEGER PRIMARY KEY AUTOINCREMENT,
    id              TEXT    NOT NULL UNIQUE,
    empresa_id      TEXT    NOT NULL REFERENCES empresas (id),
    codigo          TEXT    NOT NULL DEFAULT '',
    nombre          TEXT    NOT NULL DEFAULT '',
    descripcion     TEXT    NOT NULL DEFAULT '',
    precio_unitario INTEGER NOT NULL DEFAULT 0,
    unidad          TEXT    NOT NULL DEFAULT '',
    es_exento       INTEGER NOT NULL DEFAULT 0,
    categoria       TEXT    NOT NULL DEFAULT '',
    created_at      TEXT    NOT NULL,
    updated_at      TEXT    NOT NULL,
    deleted_at      TEXT
);
CREATE UNIQUE INDEX productos_codigo ON productos (empresa_id, codigo) WHERE deleted_at IS NULL AND codigo <> '';
CREATE INDEX productos_empresa_seq ON productos (empresa_id, seq);

CREATE TABLE webhooks (
    seq        INTEGER PRIMARY KEY AUTOINCREMENT,
    id         TEXT    NOT NULL UNIQUE,
    empresa_id TEXT    NOT NULL REFERENCES empresas (id),
    url        TEXT    NOT NULL,
    events     TEXT    NOT NULL DEFAULT '[]',
    secret     BLOB,
    is_active  INTEGER NOT NULL DEFAULT 1,
    created_at TEXT    NOT NULL,
    updated_at TEXT    NOT NULL,
    deleted_at TEXT
);
CREATE INDEX webhooks_empresa_seq ON webhooks (empresa_id, seq);

CREATE TABLE api_keys (
    seq        INTEGER PRIMARY KEY AUTOINCREMENT,
    id         TEXT    NOT NULL UNIQUE,
    empresa_id TEXT    NOT NULL REFERENCES empresas (id),
    hash       BLOB    NOT NULL UNIQUE,
    can_write  INTEGER NOT NULL DEFAULT 0,
    label      TEXT    NOT NULL DEFAULT '',
    created_at TEXT    NOT NULL,
    revoked_at TEXT
);
CREATE INDEX api_keys_empresa_seq ON api_keys (empresa_id, seq);

CREATE TABLE idempotency_keys (
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
CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);

CREATE TABLE events (
    seq        INTEGER PRIMARY KEY AUTOINCREMENT,
    id         TEXT NOT NULL UNIQUE,
    empresa_id TEXT NOT NULL REFERENCES empresas (id),
    type       TEXT NOT NULL,
    payload    BLOB NOT NULL,
    created_at TEXT NOT NULL
);
CREATE INDEX events_empresa_seq ON events (empresa_id, seq);

CREATE TABLE deliveries (
    seq              INTEGER PRIMARY KEY AUTOINCREMENT,
    id               TEXT    NOT NULL UNIQUE,
    empresa_id       TEXT    NOT NULL REFERENCES empresas (id),
    webhook_id       TEXT    NOT NULL REFERENCES webhooks (id),
    event_id         TEXT    NOT NULL REFERENCES events (id),
    state            TEXT    NOT NULL,
    attempts         INTEGER NOT NULL DEFAULT 0,
    last_status_code INTEGER NOT NULL DEFAULT 0,
    last_error       TEXT    NOT NULL DEFAULT '',
    next_attempt_at  TEXT,
    created_at       TEXT    NOT NULL,
    updated_at       TEXT    NOT NULL,
    CONSTRAINT deliveries_webhook_event UNIQUE (webhook_id, event_id)
);
CREATE INDEX deliveries_webhook_seq ON deliveries (empresa_id, webhook_id, seq);

CREATE TABLE envios (
    seq        INTEGER PRIMARY KEY AUTOINCREMENT,
    id         TEXT    NOT NULL UNIQUE,
    empresa_id TEXT    NOT NULL REFERENCES empresas (id),
    dte_ids    TEXT    NOT NULL DEFAULT '[]',
    track_id   TEXT    NOT NULL DEFAULT '',
    estado     TEXT    NOT NULL DEFAULT '',
    attempts   INTEGER NOT NULL DEFAULT 0,
    xml        BLOB,
    response   BLOB,
    created_at TEXT    NOT NULL,
    updated_at TEXT    NOT NULL
);
CREATE INDEX envios_empresa_seq ON envios (empresa_id, seq);

-- +goose Down
DROP TABLE envios;
DROP TABLE deliveries;
DROP TABLE events;
DROP TABLE idempotency_keys;
DROP TABLE api_keys;
DROP TABLE webhooks;
DROP TABLE productos;
DROP TABLE clientes;
DROP TABLE dtes;
DROP TABLE cafs;
DROP TABLE certificados;
DROP TABLE empresas;
