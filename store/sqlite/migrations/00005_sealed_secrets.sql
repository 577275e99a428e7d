-- +goose Up
-- A CAF's private key (RSASK) sealed by the service, apart from the CAF's
-- public document in xml; NULL on rows written before it, whose xml still
-- holds the key until the service seals it at start.
ALTER TABLE cafs ADD COLUMN sealed_key BLOB;

-- Settings of the whole database, not of a company: the fingerprint of
-- the key-encryption key the secrets are sealed under.
CREATE TABLE settings (
    name  TEXT NOT NULL PRIMARY KEY,
    value TEXT NOT NULL
);

-- A deleted webhook is never read again: its secret goes.
UPDATE webhooks SET secret = NULL WHERE deleted_at IS NOT NULL;

-- +goose Down
DROP TABLE settings;
ALTER TABLE cafs DROP COLUMN sealed_key;
