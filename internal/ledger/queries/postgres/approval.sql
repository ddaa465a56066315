-- name: ApprovalRequestInsert
INSERT INTO approval_requests (id, invocation_id, operation_key, session_id, agent_id, tool, args,
                               args_hash, approver_role, reason, risk_tags, effect, reversibility, context, status,
                               timeout_at, decided_by, decided_at)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18)
ON CONFLICT (operation_key) DO NOTHING
RETURNING id, invocation_id, operation_key, session_id, agent_id, tool, args, args_hash,
          approver_role, reason, risk_tags, effect, reversibility, context, status, timeout_at, decided_by, decided_at,
          created_at;

-- name: ApprovalRequestGet
SELECT id, invocation_id, operation_key, session_id, agent_id, tool, args, args_hash, approver_role,
       reason, risk_tags, effect, reversibility, context, status, timeout_at, decided_by, decided_at, created_at
FROM approval_requests
WHERE id = $1;

-- name: ApprovalRequestGetDecided
-- A decider signals before it commits, so a woken reader waits for the
-- decision in flight: FOR SHARE queues behind its row lock.
SELECT id, invocation_id, operation_key, session_id, agent_id, tool, args, args_hash, approver_role,
       reason, risk_tags, effect, reversibility, context, status, timeout_at, decided_by, decided_at, created_at
FROM approval_requests
WHERE id = $1
FOR SHARE;

-- name: ApprovalRequestGetByKey
SELECT id, invocation_id, operation_key, session_id, agent_id, tool, args, args_hash, approver_role,
       reason, risk_tags, effect, reversibility, context, status, timeout_at, decided_by, decided_at, created_at
FROM approval_requests
WHERE operation_key = $1;

-- name: ApprovalRequestListPendingBySession
-- The requests a session may be waiting for; usually none, read from a
-- partial index that holds only pending requests.
SELECT id, invocation_id, operation_key, session_id, agent_id, tool, args, args_hash, approver_role,
       reason, risk_tags, effect, reversibility, context, status, timeout_at, decided_by, decided_at, created_at
FROM approval_requests
WHERE session_id = $1 AND status = 'pending';

-- name: ApprovalRequestList
-- An empty status lists every status.
SELECT id, invocation_id, operation_key, session_id, agent_id, tool, args, args_hash, approver_role,
       reason, risk_tags, effect, reversibility, context, status, timeout_at, decided_by, decided_at, created_at
FROM approval_requests
WHERE $1 = '' OR status = $1
ORDER BY created_at, id
LIMIT $2;

-- name: ApprovalRequestGetForUpdate
-- Every change to a request or its tokens first locks the request row, so
-- decisions, mints and spends on one request happen one at a time and each
-- sees what the one before it committed. NO KEY leaves foreign-key checks
-- of concurrent event inserts unblocked.
SELECT id, invocation_id, operation_key, session_id, agent_id, tool, args, args_hash, approver_role,
       reason, risk_tags, effect, reversibility, context, status, timeout_at, decided_by, decided_at, created_at
FROM approval_requests
WHERE id = $1
FOR NO KEY UPDATE;

-- name: ApprovalRequestDecide
-- Only a pending request still inside its timeout moves, even if the timer
-- that closes it has not fired yet. NULL new arguments keep the frozen ones.
UPDATE approval_requests
SET status = $2, decided_by = $3, decided_at = now(),
    args = coalesce($4::json, args), args_hash = coalesce($5, args_hash)
WHERE id = $1 AND status = 'pending' AND timeout_at > now()
RETURNING id, invocation_id, operation_key, session_id, agent_id, tool, args, args_hash,
          approver_role, reason, risk_tags, effect, reversibility, context, status, timeout_at, decided_by, decided_at,
          created_at;

-- name: ApprovalRequestExpire
UPDATE approval_requests
SET status = $2, decided_by = $3, decided_at = now()
WHERE id = $1 AND status = 'pending';

-- name: ApprovalRequestPage
-- Oldest first, the order an approver works a queue in. $1…$5 filter
-- (status, tool, agent, created at or after, created before; empty or NULL
-- for any); $6…$8 are the cursor (rank unused, time, ID; NULL for the first
-- page); $9 the page's length.
SELECT id, invocation_id, operation_key, session_id, agent_id, tool, args, args_hash, approver_role,
       reason, risk_tags, effect, reversibility, context, status, timeout_at, decided_by, decided_at, created_at
FROM approval_requests
WHERE ($1 = '' OR status = $1) AND ($2 = '' OR tool = $2) AND ($3 = '' OR agent_id = $3)
  AND ($4::timestamptz IS NULL OR created_at >= $4) AND ($5::timestamptz IS NULL OR created_at < $5)
  AND ($6::int IS NULL OR (created_at, id) > ($7::timestamptz, $8::text))
ORDER BY created_at, id
LIMIT $9;

-- name: ApprovalRequestCount
SELECT count(*)
FROM approval_requests
WHERE ($1 = '' OR status = $1) AND ($2 = '' OR tool = $2) AND ($3 = '' OR agent_id = $3)
  AND ($4::timestamptz IS NULL OR created_at >= $4) AND ($5::timestamptz IS NULL OR created_at < $5);
