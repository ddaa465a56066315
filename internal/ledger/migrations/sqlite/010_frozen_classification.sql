-- Frozen classification: a call is judged by the catalog it ran under.
--
-- tool_registry mirrors the catalog the service runs now and is rewritten
-- at each start. tool_registry_versions keeps every classification ever
-- synced, one row per (catalog version, tool), and is append-only: the
-- triggers below refuse UPDATE and DELETE, so no later catalog can rewrite
-- what an earlier one said.
CREATE TABLE tool_registry_versions (
    id                INTEGER PRIMARY KEY AUTOINCREMENT,
    catalog_version   TEXT NOT NULL CHECK (catalog_version <> ''),
    name              TEXT NOT NULL,
    effect            TEXT NOT NULL CHECK (effect IN ('read', 'write', 'money')),
    delivery          TEXT NOT NULL CHECK (delivery IN ('readonly', 'real-sync', 'record-deferred')),
    reversibility     TEXT NOT NULL CHECK (reversibility IN ('none', 'compensable', 'irreversible')),
    compensation_tool TEXT CHECK (compensation_tool <> ''),
    approver_role     TEXT CHECK (approver_role <> ''),
    connector_kind    TEXT NOT NULL,
    owner             TEXT NOT NULL,
    first_synced_at   TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    UNIQUE (catalog_version, name)
);

CREATE INDEX tool_registry_versions_name_id_idx ON tool_registry_versions (name, id);

CREATE TRIGGER tool_registry_versions_no_update
    BEFORE UPDATE ON tool_registry_versions
BEGIN
    SELECT RAISE(ABORT, 'tool_registry_versions is append-only: UPDATE refused');
END;

CREATE TRIGGER tool_registry_versions_no_delete
    BEFORE DELETE ON tool_registry_versions
BEGIN
    SELECT RAISE(ABORT, 'tool_registry_versions is append-only: DELETE refused');
END;

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
ALTER TABLE invocations ADD COLUMN tool_call_id TEXT CHECK (tool_call_id <> '');
ALTER TABLE invocations ADD COLUMN effect_class TEXT CHECK (effect_class IN ('read', 'write', 'money'));
ALTER TABLE invocations ADD COLUMN catalog_version TEXT CHECK (catalog_version <> '');
ALTER TABLE effects ADD COLUMN effect_class TEXT CHECK (effect_class IN ('read', 'write', 'money'));
ALTER TABLE effects ADD COLUMN catalog_version TEXT CHECK (catalog_version <> '');

UPDATE invocations
SET effect_class = (SELECT t.effect FROM tool_registry t WHERE t.name = invocations.tool),
    catalog_version = (SELECT NULLIF(t.catalog_hash, '') FROM tool_registry t WHERE t.name = invocations.tool);

UPDATE effects
SET effect_class = (SELECT t.effect FROM tool_registry t WHERE t.name = effects.tool),
    catalog_version = (SELECT NULLIF(t.catalog_hash, '') FROM tool_registry t WHERE t.name = effects.tool);
