-- name: ApprovalEventInsert
-- Selecting from the request makes an unknown request insert nothing
-- rather than fail on the foreign key, and lets a NULL hash stand for the
-- request's arguments hash as it is now.
INSERT INTO approval_events (approval_id, kind, actor, args_hash_before, args_hash_after, detail)
SELECT id, $2, $3, coalesce($4, args_hash), $5, $6::jsonb
FROM approval_requests
WHERE id = $1
RETURNING id, approval_id, kind, actor, args_hash_before, args_hash_after, detail, created_at;

-- name: ApprovalEventListByApproval
SELECT id, approval_id, kind, actor, args_hash_before, args_hash_after, detail, created_at
FROM approval_events
WHERE approval_id = $1
ORDER BY id;
