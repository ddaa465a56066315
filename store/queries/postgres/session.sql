-- A session moves only by a conditional UPDATE whose WHERE clause is the
-- rule; the store reads the row under a lock first, so a refusal is
-- explained by the state the UPDATE saw.

-- name: SessionInsert
INSERT INTO sessions (id, agent_id, state, facts, fact_provenance)
VALUES ($1, $2, 'active', $3, $4)
ON CONFLICT (id) DO NOTHING
RETURNING id, agent_id, state, facts, fact_provenance, halt_step, halt_reason, resolved_by, resolve_reason, transcript,
          created_at, updated_at, ended_at;

-- name: SessionGet
SELECT id, agent_id, state, facts, fact_provenance, halt_step, halt_reason, resolved_by, resolve_reason, transcript,
       created_at, updated_at, ended_at
FROM sessions
WHERE id = $1;

-- name: SessionGetForUpdate
SELECT id, agent_id, state, facts, fact_provenance, halt_step, halt_reason, resolved_by, resolve_reason, transcript,
       created_at, updated_at, ended_at
FROM sessions
WHERE id = $1
FOR UPDATE;

-- name: SessionHalt
-- Only an active session halts: a halted one keeps the step that halted it
-- first, and an ended one has no calls left to stop.
UPDATE sessions
SET state = 'halted', halt_step = $2, halt_reason = $3, updated_at = now()
WHERE id = $1 AND state = 'active'
RETURNING id, agent_id, state, facts, fact_provenance, halt_step, halt_reason, resolved_by, resolve_reason, transcript,
          created_at, updated_at, ended_at;

-- name: SessionResolve
UPDATE sessions
SET state = 'active', halt_step = NULL, halt_reason = NULL, resolved_by = $2, resolve_reason = $3,
    updated_at = now()
WHERE id = $1 AND state = 'halted'
RETURNING id, agent_id, state, facts, fact_provenance, halt_step, halt_reason, resolved_by, resolve_reason, transcript,
          created_at, updated_at, ended_at;

-- name: SessionEnd
-- A call ends whether or not its session is halted; the halt stays on
-- record, unresolved.
UPDATE sessions
SET state = 'ended', transcript = $2, ended_at = now(), updated_at = now()
WHERE id = $1 AND state <> 'ended'
RETURNING id, agent_id, state, facts, fact_provenance, halt_step, halt_reason, resolved_by, resolve_reason, transcript,
          created_at, updated_at, ended_at;

-- name: SessionFactsSet
-- Facts an operator or a signing platform vouches for, written over the
-- row the caller locked with SessionGetForUpdate.
UPDATE sessions
SET facts = $2, fact_provenance = $3, updated_at = now()
WHERE id = $1
RETURNING id, agent_id, state, facts, fact_provenance, halt_step, halt_reason, resolved_by, resolve_reason, transcript,
          created_at, updated_at, ended_at;
