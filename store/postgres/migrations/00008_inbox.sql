-- +goose Up
-- The company's inbox and mail (issue 24). A received file (recepcion) is
-- kept as it arrived, with its verification report, once per digest; its
-- numero is the company's own (the CodEnvio of its answers), from 1 up.
-- Each document it carries is a recibido, once per dedupe_key (the
-- service's choice), with the SII's window for answering it. A correo is
-- a mail the service sends, its message fixed when it is queued; a
-- mensaje is a mail read from the company's mailbox, recognized again by
-- its Message-ID or its digest. correo_config holds the mailbox settings
-- with their two passwords sealed, and the reader's progress.
-- Times, JSON and sealed bytes are kept as in 00001.

CREATE TABLE recepciones (
    seq        BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id         TEXT    NOT NULL UNIQUE,
    empresa_id TEXT    NOT NULL REFERENCES empresas (id),
    numero     BIGINT NOT NULL CHECK (numero >= 1),
    digest     TEXT    NOT NULL,
    origen     TEXT    NOT NULL DEFAULT '',
    mensaje_id TEXT    NOT NULL DEFAULT '',
    remitente  TEXT    NOT NULL DEFAULT '',
    estado     TEXT    NOT NULL DEFAULT '',
    xml        BYTEA,
    report     BYTEA,
    created_at TIMESTAMPTZ NOT NULL,
    CONSTRAINT recepciones_digest UNIQUE (empresa_id, digest),
    CONSTRAINT recepciones_numero UNIQUE (empresa_id, numero)
);
CREATE INDEX recepciones_empresa_seq ON recepciones (empresa_id, seq);

CREATE TABLE recibidos (
    seq                 BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id                  TEXT    NOT NULL UNIQUE,
    empresa_id          TEXT    NOT NULL REFERENCES empresas (id),
    recepcion_id        TEXT    NOT NULL REFERENCES recepciones (id),
    dedupe_key          TEXT    NOT NULL,
    rut_emisor          TEXT    NOT NULL DEFAULT '',
    razon_social_emisor TEXT    NOT NULL DEFAULT '',
    tipo_dte            BIGINT NOT NULL DEFAULT 0,
    folio               BIGINT NOT NULL DEFAULT 0,
    fecha_emision       TEXT    NOT NULL DEFAULT '',
    monto_total         BIGINT NOT NULL DEFAULT 0,
    estado              TEXT    NOT NULL DEFAULT '',
    correo_emisor       TEXT    NOT NULL DEFAULT '',
    xml                 BYTEA,
    report              BYTEA,
    respuesta           BYTEA,
    rcv                 BYTEA,
    fecha_recepcion_sii TIMESTAMPTZ,
    plazo_vence         TIMESTAMPTZ,
    plazo_avisado_at    TIMESTAMPTZ,
    created_at          TIMESTAMPTZ NOT NULL,
    updated_at          TIMESTAMPTZ NOT NULL,
    CONSTRAINT recibidos_dedupe_key UNIQUE (empresa_id, dedupe_key)
);
-- The listing, newest first, and each of its filters.
CREATE INDEX recibidos_empresa_seq ON recibidos (empresa_id, seq);
CREATE INDEX recibidos_rut_emisor ON recibidos (empresa_id, rut_emisor, seq);
CREATE INDEX recibidos_tipo_dte ON recibidos (empresa_id, tipo_dte, seq);
CREATE INDEX recibidos_estado ON recibidos (empresa_id, estado, seq);
CREATE INDEX recibidos_fecha_emision ON recibidos (empresa_id, fecha_emision);
CREATE INDEX recibidos_plazo ON recibidos (empresa_id, plazo_vence) WHERE plazo_vence IS NOT NULL;
CREATE INDEX recibidos_sin_aviso ON recibidos (empresa_id, plazo_vence) WHERE plazo_avisado_at IS NULL;

CREATE TABLE correos (
    seq         BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id          TEXT    NOT NULL UNIQUE,
    empresa_id  TEXT    NOT NULL REFERENCES empresas (id),
    tipo        TEXT    NOT NULL DEFAULT '',
    dte_id      TEXT    NOT NULL DEFAULT '',
    recibido_id TEXT    NOT NULL DEFAULT '',
    para        TEXT    NOT NULL DEFAULT '',
    message_id  TEXT    NOT NULL DEFAULT '',
    estado      TEXT    NOT NULL DEFAULT '',
    attempts    BIGINT NOT NULL DEFAULT 0,
    last_error  TEXT    NOT NULL DEFAULT '',
    message     BYTEA,
    sent_at     TIMESTAMPTZ,
    created_at  TIMESTAMPTZ NOT NULL,
    updated_at  TIMESTAMPTZ NOT NULL
);
CREATE INDEX correos_empresa_seq ON correos (empresa_id, seq);
CREATE INDEX correos_dte ON correos (empresa_id, dte_id, seq);
CREATE INDEX correos_recibido ON correos (empresa_id, recibido_id, seq);

CREATE TABLE mensajes (
    seq        BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id         TEXT NOT NULL UNIQUE,
    empresa_id TEXT NOT NULL REFERENCES empresas (id),
    message_id TEXT NOT NULL DEFAULT '',
    digest     TEXT NOT NULL,
    from_addr  TEXT NOT NULL DEFAULT '',
    subject    TEXT NOT NULL DEFAULT '',
    estado     TEXT NOT NULL DEFAULT '',
    detalle    TEXT NOT NULL DEFAULT '',
    created_at TIMESTAMPTZ NOT NULL,
    CONSTRAINT mensajes_digest UNIQUE (empresa_id, digest)
);
CREATE UNIQUE INDEX mensajes_message_id ON mensajes (empresa_id, message_id) WHERE message_id <> '';
CREATE INDEX mensajes_empresa_seq ON mensajes (empresa_id, seq);

CREATE TABLE correo_config (
    empresa_id  TEXT NOT NULL PRIMARY KEY REFERENCES empresas (id),
    config      BYTEA NOT NULL,
    sealed_imap BYTEA,
    sealed_smtp BYTEA,
    updated_at  TIMESTAMPTZ NOT NULL
);

-- What the receptor of one of the company's documents answered about it
-- by mail (JSON); NULL until it answers.
ALTER TABLE dtes ADD COLUMN intercambio BYTEA;

-- +goose Down
ALTER TABLE dtes DROP COLUMN intercambio;
DROP TABLE correo_config;
DROP TABLE mensajes;
DROP TABLE correos;
DROP TABLE recibidos;
DROP TABLE recepciones;
