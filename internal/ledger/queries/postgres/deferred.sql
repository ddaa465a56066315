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

-- name: DeferredGet
SELECT id, session_id, operation_key, tool, args, status, receipt, reason, created_at, updated_at
FROM deferred_items
WHERE id = $1;

-- name: DeferredGetForUpdate
-- NO KEY leaves the foreign-key checks of post-call items that name the
-- item unblocked.
SELECT id, session_id, operation_key, tool, args, status, receipt, reason, created_at, updated_at
FROM deferred_items
WHERE id = $1
FOR NO KEY UPDATE;

-- name: DeferredSetOutcome
-- $2 is delivered, failed or held. A recorded item takes any; a failed one
-- may still be delivered by a later retry, or held for a human; a held one
-- only delivered, by a retry or a human. delivered is final. A reason, when
-- given, replaces the stored one; a delivery without one keeps it.
UPDATE deferred_items
SET status = $2, receipt = $3, reason = coalesce($4, reason), updated_at = now()
WHERE id = $1 AND (status = 'recorded'
                  OR (status = 'failed' AND $2 IN ('delivered', 'held'))
                  OR (status = 'held' AND $2 = 'delivered'))
RETURNING id, session_id, operation_key, tool, args, status, receipt, reason, created_at, updated_at;
