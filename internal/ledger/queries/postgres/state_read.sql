-- Before and after reads of a write (migration 018).

-- name: EffectRecordBeforeRead
-- Only the claim's holder records the before read, once, while the effect
-- is in progress: it is read before the provider is called.
UPDATE effects
SET before_read = $3, updated_at = now()
WHERE operation_key = $1 AND lease_owner = $2 AND status = 'in_progress' AND before_read IS NULL;

-- name: EffectRecordAfterRead
-- The first read-back of a succeeded effect is kept; later ones are not.
-- Returns the effect's reads as recorded, so the answer need not read them.
UPDATE effects
SET after_read = $2, updated_at = now()
WHERE operation_key = $1 AND status = 'succeeded' AND after_read IS NULL
RETURNING operation_key, before_read, after_read;

-- name: EffectStateReadsGet
SELECT operation_key, before_read, after_read
FROM effects
WHERE operation_key = $1;

-- name: EffectStateReadsListBySession
SELECT e.operation_key, e.before_read, e.after_read
FROM effects e
JOIN invocations i ON i.operation_key = e.operation_key
WHERE i.session_id = $1 AND (e.before_read IS NOT NULL OR e.after_read IS NOT NULL)
ORDER BY e.created_at, e.operation_key;
