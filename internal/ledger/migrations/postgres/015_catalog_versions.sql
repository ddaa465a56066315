-- Catalog versions: a catalog reloads without a restart, and every process
-- of one ledger converges on the same one.
--
-- catalog_versions keeps each catalog file the service has run, whole and
-- under its sha256, so any process can load the version an invocation was
-- admitted under and run it, approve it and compensate it by that version
-- whatever the current one says. catalog_activations records each time a
-- version became current, in order: the last row is the version every
-- process converges on. Both are append-only.
CREATE TABLE catalog_versions (
    version           text        PRIMARY KEY CHECK (version <> ''),
    source            bytea       NOT NULL,
    first_recorded_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE catalog_activations (
    id           bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    version      text        NOT NULL REFERENCES catalog_versions (version),
    activated_at timestamptz NOT NULL DEFAULT now()
);

CREATE FUNCTION catalog_history_refuse_change() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION '% is append-only: % refused', TG_TABLE_NAME, TG_OP
        USING ERRCODE = 'insufficient_privilege';
END;
$$;

CREATE TRIGGER catalog_versions_append_only
    BEFORE UPDATE OR DELETE OR TRUNCATE ON catalog_versions
    FOR EACH STATEMENT EXECUTE FUNCTION catalog_history_refuse_change();

CREATE TRIGGER catalog_activations_append_only
    BEFORE UPDATE OR DELETE OR TRUNCATE ON catalog_activations
    FOR EACH STATEMENT EXECUTE FUNCTION catalog_history_refuse_change();
