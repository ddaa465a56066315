-- All lease arithmetic uses the database's clock, now(): it is the one
-- clock every worker shares, and within a transaction it is a single
-- instant, so a claim is judged against one consistent "now". Lease TTLs
-- arrive in milliseconds.

-- name: EffectInsert
INSERT INTO effects (operation_key, invocation_id, tool, payload_hash, status, lease_owner,
                     lease_expires_at, attempts, before_state, effect_class, catalog_version)
VALUES ($1, $2, $3, $4, 'in_progress', $5, now() + $6::bigint * interval '1 millisecond', 1, $7,
        $8, $9)
ON CONFLICT (operation_key) DO NOTHING
RETURNING operation_key, invocation_id, tool, payload_hash, status, lease_owner, lease_expires_at,
          attempts, before_state, after_state, receipt, result, error, created_at, updated_at;

-- name: EffectGetForClaim
-- FOR UPDATE holds the row until the claim commits, so no other claimer can
-- change it between this read and the decision taken on it.
SELECT operation_key, invocation_id, tool, payload_hash, status, lease_owner, lease_expires_at,
       attempts, before_state, after_state, receipt, result, error, created_at, updated_at,
       lease_expires_at <= now() AS lease_expired
FROM effects
WHERE operation_key = $1
FOR UPDATE;

-- name: EffectTakeover
-- before_state is kept: the first attempt read it before the provider could
-- have acted, while a takeover may already see the effect.
UPDATE effects
SET lease_owner = $2,
    lease_expires_at = now() + $3::bigint * interval '1 millisecond',
    attempts = attempts + 1,
    updated_at = now()
WHERE operation_key = $1
RETURNING operation_key, invocation_id, tool, payload_hash, status, lease_owner, lease_expires_at,
          attempts, before_state, after_state, receipt, result, error, created_at, updated_at;

-- name: EffectSettle
-- The lease is not required to be live: an owner whose lease expired but
-- was never taken over still holds the only record of what happened.
UPDATE effects
SET status = $3, receipt = $4, after_state = $5, result = $6, error = $7, updated_at = now()
WHERE operation_key = $1 AND lease_owner = $2 AND status = 'in_progress';

-- name: EffectGet
SELECT operation_key, invocation_id, tool, payload_hash, status, lease_owner, lease_expires_at,
       attempts, before_state, after_state, receipt, result, error, created_at, updated_at
FROM effects
WHERE operation_key = $1;

-- name: EffectListByStatus
SELECT operation_key, invocation_id, tool, payload_hash, status, lease_owner, lease_expires_at,
       attempts, before_state, after_state, receipt, result, error, created_at, updated_at
FROM effects
WHERE status = $1
ORDER BY created_at, operation_key
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
WHERE status = 'in_progress' AND lease_expires_at <= now()
ORDER BY lease_expires_at, operation_key
LIMIT $1;

-- name: EffectHandOver
UPDATE effects
SET lease_owner = $3, lease_expires_at = now() + $4::bigint * interval '1 millisecond', updated_at = now()
WHERE operation_key = $1 AND lease_owner = $2 AND status = 'in_progress';

-- name: EffectSettleFinish
-- EffectSettle and the invocation's outcome in one statement, so one round
-- trip commits both or neither: the invocation is finished only if the
-- settle matched ($1…$7 as EffectSettle). $8…$10 are the invocation, its
-- state and observation; $12, when not NULL, is recorded instead of $10 if
-- the rollback of session $11 has begun. Returns whether the effect
-- settled, whether $12 was recorded, and whether the invocation finished.
WITH settled AS (
    UPDATE effects
    SET status = $3, receipt = $4, after_state = $5, result = $6, error = $7, updated_at = now()
    WHERE operation_key = $1 AND lease_owner = $2 AND status = 'in_progress'
    RETURNING operation_key
), rolling AS (
    SELECT $12::jsonb IS NOT NULL
           AND EXISTS (SELECT 1 FROM sessions WHERE id = $11 AND rollback_started_at IS NOT NULL) AS back
), finished AS (
    UPDATE invocations
    SET state = $9,
        observation = CASE WHEN (SELECT back FROM rolling) THEN $12::jsonb ELSE $10::jsonb END,
        updated_at = now()
    WHERE id = $8 AND EXISTS (SELECT 1 FROM settled)
    RETURNING id
)
SELECT EXISTS (SELECT 1 FROM settled), (SELECT back FROM rolling), EXISTS (SELECT 1 FROM finished);
