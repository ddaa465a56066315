-- All lease arithmetic uses the database's clock, now(): it is the one
-- clock every worker shares, and within a transaction it is a single
-- instant, so a claim is judged against one consistent "now". Lease TTLs
-- arrive in milliseconds.

-- name: EffectInsert
-- $10 is the before read the claimer made before claiming, or NULL.
INSERT INTO effects (operation_key, invocation_id, tool, payload_hash, status, lease_owner,
                     lease_expires_at, attempts, before_state, effect_class, catalog_version, before_read)
VALUES ($1, $2, $3, $4, 'in_progress', $5, now() + $6::bigint * interval '1 millisecond', 1, $7,
        $8, $9, $10::jsonb)
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
-- was never taken over still holds the only record of what happened. $8,
-- when not NULL, is the succeeded effect's after read-back, made before
-- the settle so one write records both.
UPDATE effects
SET status = $3, receipt = $4, after_state = $5, result = $6, error = $7,
    after_read = COALESCE(after_read, $8::jsonb), updated_at = now()
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

-- name: EffectSettleFinishCTE
-- EffectSettle and the invocation's outcome in one statement, so one round
-- trip commits both or neither: the invocation is finished only if the
-- settle matched ($1…$8 as EffectSettle). $9…$11 are the invocation, its
-- state and observation; $13, when not NULL, is recorded instead of $11 if
-- the rollback of session $12 has begun. Returns whether the effect
-- settled, whether $13 was recorded, the effect's state reads as settled,
-- the invocation as finished (NULLs if it was not) and the latest status
-- provider $14 reported for the message its receipt names (NULLs for
-- none), so the answer reads none of them again.
WITH settled AS (
    UPDATE effects
    SET status = $3, receipt = $4, after_state = $5, result = $6, error = $7,
        after_read = COALESCE(after_read, $8::jsonb), updated_at = now()
    WHERE operation_key = $1 AND lease_owner = $2 AND status = 'in_progress'
    RETURNING operation_key, before_read, after_read
), rolling AS (
    SELECT $13::jsonb IS NOT NULL
           AND EXISTS (SELECT 1 FROM sessions WHERE id = $12 AND rollback_started_at IS NOT NULL) AS back
), finished AS (
    UPDATE invocations
    SET state = $10,
        observation = CASE WHEN (SELECT back FROM rolling) THEN $13::jsonb ELSE $11::jsonb END,
        updated_at = now()
    WHERE id = $9 AND EXISTS (SELECT 1 FROM settled)
    RETURNING id, operation_key, session_id, agent_id, tool, args, args_hash, route, state, observation,
              workflow_id, created_at, updated_at, tool_call_id, effect_class, catalog_version
)
SELECT EXISTS (SELECT 1 FROM settled), (SELECT back FROM rolling),
       s.operation_key, s.before_read, s.after_read,
       f.id, f.operation_key, f.session_id, f.agent_id, f.tool, f.args, f.args_hash, f.route, f.state, f.observation,
       f.workflow_id, f.created_at, f.updated_at, f.tool_call_id, f.effect_class, f.catalog_version,
       m.provider, m.message_id, m.status, m.recipient, m.error_code, m.created_at, m.updated_at
FROM (SELECT 1) AS one
LEFT JOIN settled s ON true
LEFT JOIN finished f ON true
LEFT JOIN message_statuses m
  ON m.provider = $14::text AND m.message_id = f.observation->'receipt'->'fields'->>'message_sid';

-- name: EffectClaimNewCTE
-- A new claim in one statement: the session is read under FOR SHARE (held
-- against SessionRollbackBegin until the statement commits), the effect is
-- inserted unless the rollback has begun, and the undo entry ($11…$15,
-- $13 NULL for none) is pushed with it. With $16 set, the claim also
-- needs request $16's token spent by $17 in this very transaction (its
-- used_at is the transaction's now()), so a claim whose spend did not take
-- claims nothing. A row comes back only for a new claim; anything else (a
-- taken key, a closed session, no spend) inserted nothing and is decided
-- by the claim's transaction (EffectClaim). $18 is the before read the
-- claimer made before claiming, or NULL.
WITH session AS (
    SELECT rollback_started_at IS NOT NULL AS closed
    FROM sessions
    WHERE id = $10::text
    FOR SHARE
), claimed AS (
    INSERT INTO effects (operation_key, invocation_id, tool, payload_hash, status, lease_owner,
                         lease_expires_at, attempts, before_state, effect_class, catalog_version, before_read)
    SELECT $1::text, $2::text, $3::text, $4::text, 'in_progress', $5::text,
           now() + $6::bigint * interval '1 millisecond', 1, $7::jsonb, $8::text, $9::text, $18::jsonb
    WHERE NOT EXISTS (SELECT 1 FROM session WHERE closed)
      AND ($16::text IS NULL OR EXISTS (
          SELECT 1 FROM approval_tokens
          WHERE approval_id = $16::text AND used_by = $17::text AND used_at = now()))
    ON CONFLICT (operation_key) DO NOTHING
    RETURNING operation_key, invocation_id, tool, payload_hash, status, lease_owner, lease_expires_at,
              attempts, before_state, after_state, receipt, result, error, created_at, updated_at
), undo AS (
    INSERT INTO undo_entries (id, session_id, operation_key, compensation_tool, compensation_version,
                              args_snapshot, status)
    SELECT $11::text, $12::text, operation_key, $13::text, $14::text, $15::json, 'pending'
    FROM claimed
    WHERE $13::text IS NOT NULL
    RETURNING id, session_id, operation_key, seq, compensation_tool, compensation_version, args_snapshot,
              status, detail, created_at, updated_at
)
SELECT c.operation_key, c.invocation_id, c.tool, c.payload_hash, c.status, c.lease_owner, c.lease_expires_at,
       c.attempts, c.before_state, c.after_state, c.receipt, c.result, c.error, c.created_at, c.updated_at,
       u.id, u.session_id, u.operation_key, u.seq, u.compensation_tool, u.compensation_version, u.args_snapshot,
       u.status, u.detail, u.created_at, u.updated_at
FROM claimed c
LEFT JOIN undo u ON true;

-- name: InvocationFinishSettled
-- The invocation's part of EffectSettleFinish, for a transaction whose
-- first statement is EffectSettle. $1…$3 are the invocation, its state and
-- observation; $5, when not NULL, is recorded instead of $3 if the
-- rollback of session $4 has begun. Returns whether $5 was recorded, then
-- the invocation as finished.
UPDATE invocations
SET state = $2,
    observation = CASE
        WHEN $5::jsonb IS NOT NULL AND EXISTS (SELECT 1 FROM sessions WHERE id = $4 AND rollback_started_at IS NOT NULL)
        THEN $5::jsonb ELSE $3::jsonb END,
    updated_at = now()
WHERE id = $1
RETURNING $5::jsonb IS NOT NULL AND EXISTS (SELECT 1 FROM sessions WHERE id = $4 AND rollback_started_at IS NOT NULL),
          id, operation_key, session_id, agent_id, tool, args, args_hash, route, state, observation,
          workflow_id, created_at, updated_at, tool_call_id, effect_class, catalog_version;
