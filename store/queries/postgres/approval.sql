-- name: ApprovalRequestInsert
INSERT INTO approval_requests (id, invocation_id, operation_key, session_id, agent_id, tool, args,
                               args_hash, approver_role, reason, risk_tags, context, status,
                               timeout_at, decided_by, decided_at)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)
ON CONFLICT (operation_key) DO NOTHING
RETURNING id, invocation_id, operation_key, session_id, agent_id, tool, args, args_hash,
          approver_role, reason, risk_tags, context, status, timeout_at, decided_by, decided_at,
          created_at;

-- name: ApprovalRequestGet
SELECT id, invocation_id, operation_key, session_id, agent_id, tool, args, args_hash, approver_role,
       reason, risk_tags, context, status, timeout_at, decided_by, decided_at, created_at
FROM approval_requests
WHERE id = $1;

-- name: ApprovalRequestGetByKey
SELECT id, invocation_id, operation_key, session_id, agent_id, tool, args, args_hash, approver_role,
       reason, risk_tags, context, status, timeout_at, decided_by, decided_at, created_at
FROM approval_requests
WHERE operation_key = $1;

-- name: ApprovalRequestList
-- An empty status lists every status.
SELECT id, invocation_id, operation_key, session_id, agent_id, tool, args, args_hash, approver_role,
       reason, risk_tags, context, status, timeout_at, decided_by, decided_at, created_at
FROM approval_requests
WHERE $1 = '' OR status = $1
ORDER BY created_at, id
LIMIT $2;

-- name: ApprovalRequestExpire
UPDATE approval_requests
SET status = $2, decided_by = 'policy:timeout', decided_at = now()
WHERE id = $1 AND status = 'pending';
