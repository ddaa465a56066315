-- name: DeferredInsert
INSERT INTO deferred_items (id, session_id, operation_key, tool, args, status, receipt, reason)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
ON CONFLICT (operation_key) DO NOTHING
RETURNING id, session_id, operation_key, tool, args, status, receipt, reason, created_at, updated_at;

-- name: DeferredGetByKey
SELECT id, session_id, operation_key, tool, args, status, receipt, reason, created_at, updated_at
FROM deferred_items
WHERE operation_key = $1;

-- name: DeferredListBySession
SELECT id, session_id, operation_key, tool, args, status, receipt, reason, created_at, updated_at
FROM deferred_items
WHERE session_id = $1
ORDER BY created_at, id;
