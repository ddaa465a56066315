-- name: ToolRegistryLock
-- Serializes concurrent syncs on one schema until the transaction ends:
-- processes starting together would otherwise each clear the mirror and
-- then collide inserting the same names.
SELECT pg_advisory_xact_lock(hashtext('maestro.tool_registry'), hashtext(coalesce(current_schema(), '')));

-- name: ToolRegistryDeleteAll
DELETE FROM tool_registry;

-- name: ToolRegistryInsert
INSERT INTO tool_registry (name, effect, delivery, reversibility, compensation_tool, approver_role,
                           connector_kind, owner, catalog_hash)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9);

-- name: ToolRegistryList
SELECT name, effect, delivery, reversibility, compensation_tool, approver_role,
       connector_kind, owner, catalog_hash
FROM tool_registry
ORDER BY name;

-- name: ToolRegistryVersionInsert
-- Appends one catalog version's classification of a tool. A version
-- synced before (a restart on the same catalog) is already recorded and
-- stays as first recorded: the history is never rewritten.
INSERT INTO tool_registry_versions (catalog_version, name, effect, delivery, reversibility,
                                    compensation_tool, approver_role, connector_kind, owner)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
ON CONFLICT (catalog_version, name) DO NOTHING;

-- name: ToolRegistryVersionListByName
SELECT name, effect, delivery, reversibility, compensation_tool, approver_role,
       connector_kind, owner, catalog_version
FROM tool_registry_versions
WHERE name = $1
ORDER BY id;
