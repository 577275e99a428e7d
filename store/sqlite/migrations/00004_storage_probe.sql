-- +goose Up
-- One row written and deleted again by the readiness probe after a write
-- failed for want of space (store.Store.Writable): the table is empty at
-- rest.
CREATE TABLE storage_probe (
    id  INTEGER NOT NULL PRIMARY KEY,
    pad BLOB   NOT NULL
);

-- +goose Down
DROP TABLE storage_probe;
