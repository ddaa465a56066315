-- A session moves only by a conditional UPDATE whose WHERE clause is the
-- rule; the store reads the row under a lock first, so a refusal is
-- explained by the state the UPDATE saw.

-- name: SessionInsert
INSERT INTO sessions (id, agent_id, state, facts, fact_provenance)
VALUES ($1, $2, 'active', $3, $4)
ON CONFLICT (id) DO NOTHING
RETURNING id, agent_id, state, facts, fact_provenance, halt_step, halt_reason, resolved_by, resolve_reason, transcript,
          created_at, updated_at, ended_at, rollback_started_at, resolution;

-- name: SessionGet
SELECT id, agent_id, state, facts, fact_provenance, halt_step, halt_reason, resolved_by, resolve_reason, transcript,
       created_at, updated_at, ended_at, rollback_started_at, resolution
FROM sessions
WHERE id = $1;

-- name: SessionGetForAdmission
-- SessionGet with whether any approval request of the session is pending,
-- read in the transaction that records a call, which goes to the full
-- admission when one is.
SELECT s.id, s.agent_id, s.state, s.facts, s.fact_provenance, s.halt_step, s.halt_reason, s.resolved_by,
       s.resolve_reason, s.transcript, s.created_at, s.updated_at, s.ended_at, s.rollback_started_at, s.resolution,
       EXISTS (SELECT 1 FROM approval_requests r WHERE r.session_id = s.id AND r.status = 'pending')
FROM sessions s
WHERE s.id = $1;

-- name: SessionGetForUpdate
SELECT id, agent_id, state, facts, fact_provenance, halt_step, halt_reason, resolved_by, resolve_reason, transcript,
       created_at, updated_at, ended_at, rollback_started_at, resolution
FROM sessions
WHERE id = $1
FOR UPDATE;

-- name: SessionHalt
-- Only an active session halts: a halted one keeps the step that halted it
-- first, and an ended one has no calls left to stop.
UPDATE sessions
SET state = 'halted', halt_step = $2, halt_reason = $3, rollback_started_at = NULL, updated_at = now()
WHERE id = $1 AND state = 'active'
RETURNING id, agent_id, state, facts, fact_provenance, halt_step, halt_reason, resolved_by, resolve_reason, transcript,
          created_at, updated_at, ended_at, rollback_started_at, resolution;

-- name: SessionResolve
-- $4 is how: a retry marks the session as being rolled back in the same
-- update, so no call is admitted between the resolve and the rollback.
UPDATE sessions
SET state = 'active', halt_step = NULL, halt_reason = NULL, resolved_by = $2, resolve_reason = $3,
    resolution = $4::text, rollback_started_at = CASE WHEN $4::text = 'retry' THEN now() END,
    updated_at = now()
WHERE id = $1 AND state = 'halted'
RETURNING id, agent_id, state, facts, fact_provenance, halt_step, halt_reason, resolved_by, resolve_reason, transcript,
          created_at, updated_at, ended_at, rollback_started_at, resolution;

-- name: SessionEnd
-- A call ends whether or not its session is halted; the halt stays on
-- record, unresolved.
UPDATE sessions
SET state = 'ended', transcript = $2, ended_at = now(), updated_at = now()
WHERE id = $1 AND state <> 'ended'
RETURNING id, agent_id, state, facts, fact_provenance, halt_step, halt_reason, resolved_by, resolve_reason, transcript,
          created_at, updated_at, ended_at, rollback_started_at, resolution;

-- name: SessionFactsSet
-- Facts an operator or a signing platform vouches for, written over the
-- row the caller locked with SessionGetForUpdate.
UPDATE sessions
SET facts = $2, fact_provenance = $3, updated_at = now()
WHERE id = $1
RETURNING id, agent_id, state, facts, fact_provenance, halt_step, halt_reason, resolved_by, resolve_reason, transcript,
          created_at, updated_at, ended_at, rollback_started_at, resolution;

-- name: SessionRollbackBegin
-- A mark already there is kept: it dates the rollback the retry resumes.
UPDATE sessions
SET rollback_started_at = COALESCE(rollback_started_at, now()), updated_at = now()
WHERE id = $1 AND state = 'active'
RETURNING id, agent_id, state, facts, fact_provenance, halt_step, halt_reason, resolved_by, resolve_reason, transcript,
          created_at, updated_at, ended_at, rollback_started_at, resolution;

-- name: SessionRollbackEnd
UPDATE sessions
SET rollback_started_at = NULL, updated_at = now()
WHERE id = $1 AND rollback_started_at IS NOT NULL
RETURNING id, agent_id, state, facts, fact_provenance, halt_step, halt_reason, resolved_by, resolve_reason, transcript,
          created_at, updated_at, ended_at, rollback_started_at, resolution;

-- name: SessionGetForClaim
-- FOR SHARE holds the row against SessionRollbackBegin until the claim
-- commits: a claim and the start of a rollback never interleave.
SELECT id, agent_id, state, facts, fact_provenance, halt_step, halt_reason, resolved_by, resolve_reason, transcript,
       created_at, updated_at, ended_at, rollback_started_at, resolution
FROM sessions
WHERE id = $1
FOR SHARE;

-- name: SessionPage
-- Newest first. $1…$5 filter (state, a tool the session called, agent,
-- created at or after, created before; empty or NULL for any); $6…$8 are
-- the cursor (rank unused, time, ID; NULL for the first page); $9 the
-- page's length.
SELECT id, agent_id, state, facts, fact_provenance, halt_step, halt_reason, resolved_by, resolve_reason, transcript,
       created_at, updated_at, ended_at, rollback_started_at, resolution
FROM sessions s
WHERE ($1 = '' OR state = $1)
  AND ($2 = '' OR EXISTS (SELECT 1 FROM invocations i WHERE i.session_id = s.id AND i.tool = $2))
  AND ($3 = '' OR agent_id = $3)
  AND ($4::timestamptz IS NULL OR created_at >= $4) AND ($5::timestamptz IS NULL OR created_at < $5)
  AND ($6::int IS NULL OR (created_at, id) < ($7::timestamptz, $8::text))
ORDER BY created_at DESC, id DESC
LIMIT $9;

-- name: SessionCount
SELECT count(*)
FROM sessions s
WHERE ($1 = '' OR state = $1)
  AND ($2 = '' OR EXISTS (SELECT 1 FROM invocations i WHERE i.session_id = s.id AND i.tool = $2))
  AND ($3 = '' OR agent_id = $3)
  AND ($4::timestamptz IS NULL OR created_at >= $4) AND ($5::timestamptz IS NULL OR created_at < $5);
