-- +goose Up
-- Per-company alert preferences (caf.low_stock threshold).
CREATE TABLE alert_settings (
    empresa_id          TEXT   NOT NULL PRIMARY KEY REFERENCES empresas (id),
    low_stock_threshold BIGINT NOT NULL
);

-- +goose Down
DROP TABLE alert_settings;
