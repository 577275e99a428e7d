-- +goose Up
-- Catalog search that ignores case and accents (issue 29, point 7): each
-- cliente and producto keeps its searchable text folded by the store
-- (lower case, accents and other marks removed, in Go, so that both
-- backends fold alike whatever the database's locale): the name, a unit
-- separator, then the rut or codigo. Rows written before this migration
-- have none; the store fills them when it opens, before it serves (the
-- partial indexes find them without a scan).
ALTER TABLE clientes ADD COLUMN busqueda TEXT;
ALTER TABLE productos ADD COLUMN busqueda TEXT;
CREATE INDEX clientes_busqueda_pendiente ON clientes (seq) WHERE busqueda IS NULL;
CREATE INDEX productos_busqueda_pendiente ON productos (seq) WHERE busqueda IS NULL;

-- +goose Down
DROP INDEX productos_busqueda_pendiente;
DROP INDEX clientes_busqueda_pendiente;
ALTER TABLE productos DROP COLUMN busqueda;
ALTER TABLE clientes DROP COLUMN busqueda;
