-- +goose Up
-- The attempt log of webhook deliveries: one row per attempt.
CREATE TABLE delivery_attempts (
    seq          BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id           TEXT    NOT NULL UNIQUE,
    empresa_id   TEXT    NOT NULL REFERENCES empresas (id),
    delivery_id  TEXT    NOT NULL REFERENCES deliveries (id),
    webhook_id   TEXT    NOT NULL,
    attempt      BIGINT  NOT NULL,
    trigger      TEXT    NOT NULL,
    attempted_at TIMESTAMPTZ NOT NULL,
    status_code  BIGINT  NOT NULL DEFAULT 0,
    error_class  TEXT    NOT NULL DEFAULT '',
    error        TEXT    NOT NULL DEFAULT '',
    duration_us  BIGINT  NOT NULL DEFAULT 0,
    response     BYTEA,
    ok           BOOLEAN NOT NULL DEFAULT FALSE
);
CREATE INDEX delivery_attempts_delivery ON delivery_attempts (empresa_id, delivery_id, seq);
CREATE INDEX delivery_attempts_webhook ON delivery_attempts (empresa_id, webhook_id, seq);

-- +goose Down
DROP TABLE delivery_attempts;
