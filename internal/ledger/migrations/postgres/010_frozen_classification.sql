-- Frozen classification: a call is judged by the catalog it ran under.
--
-- tool_registry mirrors the catalog the service runs now and is rewritten
-- at each start. tool_registry_versions keeps every classification ever
-- synced, one row per (catalog version, tool), and is append-only: the
-- trigger below refuses UPDATE, DELETE and TRUNCATE, so no later catalog
-- can rewrite what an earlier one said.
CREATE TABLE tool_registry_versions (
    id                bigint      GENERATED ALWAYS AS IDENTITY UNIQUE,
    catalog_version   text        NOT NULL CHECK (catalog_version <> ''),
    name              text        NOT NULL,
    effect            text        NOT NULL CHECK (effect IN ('read', 'write', 'money')),
    delivery          text        NOT NULL CHECK (delivery IN ('readonly', 'real-sync', 'record-deferred')),
    reversibility     text        NOT NULL CHECK (reversibility IN ('none', 'compensable', 'irreversible')),
    compensation_tool text        CHECK (compensation_tool <> ''),
    approver_role     text        CHECK (approver_role <> ''),
    connector_kind    text        NOT NULL,
    owner             text        NOT NULL,
    first_synced_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (catalog_version, name)
);

CREATE INDEX tool_registry_versions_name_id_idx ON tool_registry_versions (name, id);

CREATE FUNCTION tool_registry_versions_refuse_change() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'tool_registry_versions is append-only: % refused', TG_OP
        USING ERRCODE = 'insufficient_privilege';
END;
$$;

CREATE TRIGGER tool_registry_versions_append_only
    BEFORE UPDATE OR DELETE OR TRUNCATE ON tool_registry_versions
    FOR EACH STATEMENT EXECUTE FUNCTION tool_registry_versions_refuse_change();

INSERT INTO tool_registry_versions (catalog_version, name, effect, delivery, reversibility,
                                    compensation_tool, approver_role, connector_kind, owner)
SELECT catalog_hash, name, effect, delivery, reversibility, compensation_tool, approver_role,
       connector_kind, owner
FROM tool_registry
WHERE catalog_hash <> ''
ORDER BY name;

-- tool_call_id is the agent's ID for the call, kept for correlation: the
-- operation key names the business effect and no longer carries it.
-- effect_class and catalog_version are frozen at admission (invocations)
-- and at the claim (effects). Rows from before this migration take the
-- classification the registry holds now, the best knowledge there is.
ALTER TABLE invocations
    ADD COLUMN tool_call_id    text CHECK (tool_call_id <> ''),
    ADD COLUMN effect_class    text CHECK (effect_class IN ('read', 'write', 'money')),
    ADD COLUMN catalog_version text CHECK (catalog_version <> '');

ALTER TABLE effects
    ADD COLUMN effect_class    text CHECK (effect_class IN ('read', 'write', 'money')),
    ADD COLUMN catalog_version text CHECK (catalog_version <> '');

UPDATE invocations i
SET effect_class = t.effect, catalog_version = NULLIF(t.catalog_hash, '')
FROM tool_registry t
WHERE t.name = i.tool;

UPDATE effects e
SET effect_class = t.effect, catalog_version = NULLIF(t.catalog_hash, '')
FROM tool_registry t
WHERE t.name = e.tool;
