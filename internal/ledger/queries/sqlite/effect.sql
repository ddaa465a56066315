-- All lease arithmetic uses the database's clock, 'now', like the
-- PostgreSQL queries do. Lease TTLs arrive in milliseconds.

-- name: EffectInsert
-- $10 is the before read the claimer made before claiming, or NULL.
INSERT INTO effects (operation_key, invocation_id, tool, payload_hash, status, lease_owner,
                     lease_expires_at, attempts, before_state, effect_class, catalog_version, before_read)
VALUES ($1, $2, $3, $4, 'in_progress', $5,
        strftime('%Y-%m-%dT%H:%M:%fZ', 'now', ($6 / 1000.0) || ' seconds'), 1, $7, $8, $9, $10)
ON CONFLICT (operation_key) DO NOTHING
RETURNING operation_key, invocation_id, tool, payload_hash, status, lease_owner, lease_expires_at,
          attempts, before_state, after_state, receipt, result, error, created_at, updated_at;

-- name: EffectGetForClaim
-- No FOR UPDATE in SQLite, and none needed: the claim's transaction began
-- IMMEDIATE and holds the database's write lock until it ends.
SELECT operation_key, invocation_id, tool, payload_hash, status, lease_owner, lease_expires_at,
       attempts, before_state, after_state, receipt, result, error, created_at, updated_at,
       lease_expires_at <= strftime('%Y-%m-%dT%H:%M:%fZ', 'now') AS lease_expired
FROM effects
WHERE operation_key = $1;

-- name: EffectTakeover
-- before_state is kept: the first attempt read it before the provider could
-- have acted, while a takeover may already see the effect.
UPDATE effects
SET lease_owner = $2,
    lease_expires_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now', ($3 / 1000.0) || ' seconds'),
    attempts = attempts + 1,
    updated_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
WHERE operation_key = $1
RETURNING operation_key, invocation_id, tool, payload_hash, status, lease_owner, lease_expires_at,
          attempts, before_state, after_state, receipt, result, error, created_at, updated_at;

-- name: EffectSettle
-- The lease is not required to be live: an owner whose lease expired but
-- was never taken over still holds the only record of what happened. $8,
-- when not NULL, is the succeeded effect's after read-back, made before
-- the settle so one write records both.
UPDATE effects
SET status = $3, receipt = $4, after_state = $5, result = $6, error = $7,
    after_read = COALESCE(after_read, $8), updated_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
WHERE operation_key = $1 AND lease_owner = $2 AND status = 'in_progress';

-- name: EffectGet
SELECT operation_key, invocation_id, tool, payload_hash, status, lease_owner, lease_expires_at,
       attempts, before_state, after_state, receipt, result, error, created_at, updated_at
FROM effects
WHERE operation_key = $1;

-- name: EffectListByStatus
-- rowid breaks ties within a millisecond in insertion order.
SELECT operation_key, invocation_id, tool, payload_hash, status, lease_owner, lease_expires_at,
       attempts, before_state, after_state, receipt, result, error, created_at, updated_at
FROM effects
WHERE status = $1
ORDER BY created_at, rowid
LIMIT $2;

-- name: EffectRelease
DELETE FROM effects
WHERE operation_key = $1 AND lease_owner = $2 AND status = 'in_progress';

-- name: EffectListLeaseExpired
-- Effects whose holder stopped renewing or settling them: candidates for
-- the sweeper, which checks that no workflow still runs them.
SELECT operation_key, invocation_id, tool, payload_hash, status, lease_owner, lease_expires_at,
       attempts, before_state, after_state, receipt, result, error, created_at, updated_at
FROM effects
WHERE status = 'in_progress' AND lease_expires_at <= strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
ORDER BY lease_expires_at, rowid
LIMIT $1;

-- name: EffectHandOver
UPDATE effects
SET lease_owner = $3,
    lease_expires_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now', ($4 / 1000.0) || ' seconds'),
    updated_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
WHERE operation_key = $1 AND lease_owner = $2 AND status = 'in_progress';

-- name: InvocationFinishSettled
-- The invocation's part of EffectSettleFinish, in the transaction whose
-- first statement is EffectSettle. $1…$3 are the invocation, its state and
-- observation; $5, when not NULL, is recorded instead of $3 if the
-- rollback of session $4 has begun. Returns whether $5 was recorded, then
-- the invocation as finished.
UPDATE invocations
SET state = $2,
    observation = CASE
        WHEN $5 IS NOT NULL AND EXISTS (SELECT 1 FROM sessions WHERE id = $4 AND rollback_started_at IS NOT NULL)
        THEN $5 ELSE $3 END,
    updated_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
WHERE id = $1
RETURNING $5 IS NOT NULL AND EXISTS (SELECT 1 FROM sessions WHERE id = $4 AND rollback_started_at IS NOT NULL),
          id, operation_key, session_id, agent_id, tool, args, args_hash, route, state, observation,
          workflow_id, created_at, updated_at, tool_call_id, effect_class, catalog_version;
