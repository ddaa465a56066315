-- name: PostCallItemUpsert
-- The item's tool, source, deferred intent and operation key are fixed by
-- its first insert; later upserts move its status. A delivered item never
-- moves again: no re-run or late retry can unsay a delivery or swap the
-- receipt that proved it. An invocation, once linked, stays linked.
INSERT INTO postcall_items (session_id, item_key, tool, source, deferred_id, operation_key,
                            invocation_id, status, receipt, reason, attempts, item)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, coalesce($11::jsonb, '[]'::jsonb), $12::jsonb)
ON CONFLICT (session_id, item_key) DO UPDATE
SET status = excluded.status,
    invocation_id = coalesce(excluded.invocation_id, postcall_items.invocation_id),
    receipt = excluded.receipt,
    reason = excluded.reason,
    attempts = CASE WHEN $11::jsonb IS NULL THEN postcall_items.attempts ELSE excluded.attempts END,
    item = coalesce(excluded.item, postcall_items.item),
    updated_at = now()
WHERE postcall_items.status <> 'delivered'
RETURNING session_id, item_key, tool, source, deferred_id, operation_key, invocation_id, status,
          receipt, reason, attempts, item, created_at, updated_at;

-- name: PostCallItemGet
SELECT session_id, item_key, tool, source, deferred_id, operation_key, invocation_id, status,
       receipt, reason, attempts, item, created_at, updated_at
FROM postcall_items
WHERE session_id = $1 AND item_key = $2;

-- name: PostCallItemList
SELECT session_id, item_key, tool, source, deferred_id, operation_key, invocation_id, status,
       receipt, reason, attempts, item, created_at, updated_at
FROM postcall_items
WHERE session_id = $1
ORDER BY created_at, item_key;

-- name: PostCallItemListHeld
SELECT session_id, item_key, tool, source, deferred_id, operation_key, invocation_id, status,
       receipt, reason, attempts, item, created_at, updated_at
FROM postcall_items
WHERE status = 'held'
ORDER BY updated_at, session_id, item_key
LIMIT $1;
