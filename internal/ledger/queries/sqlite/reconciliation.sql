-- name: ReconciliationEventInsert
INSERT INTO reconciliation_events (operation_key, kind, actor, reason, receipt)
VALUES ($1, $2, $3, $4, $5)
RETURNING id, operation_key, kind, actor, reason, receipt, created_at;

-- name: ReconciliationEventListByKey
SELECT id, operation_key, kind, actor, reason, receipt, created_at
FROM reconciliation_events
WHERE operation_key = $1
ORDER BY id;

-- name: EffectGetForReconcile
-- No FOR UPDATE in SQLite, and none needed: the transaction began IMMEDIATE
-- and holds the database's write lock until it ends.
SELECT operation_key, invocation_id, tool, payload_hash, status, lease_owner, lease_expires_at,
       attempts, before_state, after_state, receipt, result, error, created_at, updated_at
FROM effects
WHERE operation_key = $1;

-- name: EffectSettleHeld
-- Only an effect held for reconciliation moves; the lease plays no part, as
-- no attempt is running. after_state is kept when the decision brings none.
UPDATE effects
SET status = $2, receipt = $3, after_state = coalesce($4, after_state), result = $5, error = $6,
    updated_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
WHERE operation_key = $1 AND status = 'needs_reconciliation'
RETURNING operation_key, invocation_id, tool, payload_hash, status, lease_owner, lease_expires_at,
          attempts, before_state, after_state, receipt, result, error, created_at, updated_at;

-- name: EffectListByReceiptID
-- rowid breaks ties within a millisecond in insertion order.
SELECT operation_key, invocation_id, tool, payload_hash, status, lease_owner, lease_expires_at,
       attempts, before_state, after_state, receipt, result, error, created_at, updated_at
FROM effects
WHERE receipt IS NOT NULL AND json_extract(receipt, '$.id') = $1
ORDER BY created_at, rowid;
