-- +goose Up
-- Received files that cannot fill the disk (issue 30). A file refused
-- whole (descartado: not XML, a DOCTYPE, no signature, an answer that did
-- nothing) keeps its digest, size (tamano), report and only its first
-- bytes; guardado is what a file keeps (its XML and report, and those of
-- its documents, in bytes, as the intake counts it),
-- which the company's quota counts through recepciones_uso without
-- reading the rows. Files recorded before keep their bytes; the refused
-- envelopes among them are descartado, so the retention deletes them.
-- recepcion_settings holds each company's quota and retention (NULL: the
-- operator's default).
ALTER TABLE recepciones ADD COLUMN tamano INTEGER NOT NULL DEFAULT 0;
ALTER TABLE recepciones ADD COLUMN guardado INTEGER NOT NULL DEFAULT 0;
ALTER TABLE recepciones ADD COLUMN descartado INTEGER NOT NULL DEFAULT 0;
UPDATE recepciones SET tamano = COALESCE(length(xml), 0),
    guardado = COALESCE(length(xml), 0) + COALESCE(length(report), 0)
        + COALESCE((SELECT SUM(COALESCE(length(d.xml), 0) + COALESCE(length(d.report), 0))
                    FROM recibidos d WHERE d.recepcion_id = recepciones.id), 0),
    descartado = CASE WHEN tipo = 'envio' AND estado = 'rechazada' THEN 1 ELSE 0 END;
CREATE INDEX recepciones_uso ON recepciones (empresa_id, guardado);
CREATE INDEX recepciones_descartadas ON recepciones (empresa_id, created_at) WHERE descartado;
CREATE INDEX mensajes_created ON mensajes (empresa_id, created_at);

CREATE TABLE recepcion_settings (
    empresa_id          TEXT NOT NULL PRIMARY KEY REFERENCES empresas (id),
    max_recepciones     INTEGER,
    max_recepcion_bytes INTEGER,
    max_mensajes        INTEGER,
    retencion_dias      INTEGER,
    updated_at          TEXT NOT NULL
);

-- +goose Down
DROP TABLE recepcion_settings;
DROP INDEX mensajes_created;
DROP INDEX recepciones_descartadas;
DROP INDEX recepciones_uso;
ALTER TABLE recepciones DROP COLUMN descartado;
ALTER TABLE recepciones DROP COLUMN guardado;
ALTER TABLE recepciones DROP COLUMN tamano;
