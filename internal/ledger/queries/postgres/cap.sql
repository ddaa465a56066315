-- Caps on what one agent may hold open at once. A writer takes the agent's
-- lock for the cap, counts, and writes in one transaction, so concurrent
-- writers for one agent count one another's commits.

-- name: AgentCapLock
-- $1 names the cap and the agent; the lock is held until the transaction
-- ends.
SELECT pg_advisory_xact_lock(hashtextextended($1, 0));

-- name: SessionCountLive
SELECT count(*)
FROM sessions
WHERE agent_id = $1 AND state <> 'ended';

-- name: ApprovalCountOpen
-- A gated call awaits approval from its admission; its request opens just
-- after. Both count until the request is decided or times out.
SELECT count(*)
FROM invocations i
WHERE i.agent_id = $1 AND i.state = 'awaiting_approval'
  AND NOT EXISTS (SELECT 1 FROM approval_requests a WHERE a.invocation_id = i.id AND a.status <> 'pending');
