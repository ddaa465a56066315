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
