-- name: RefusalInsert
INSERT INTO refusals (agent_id, session_id, tool, operation_key, code, detail)
VALUES ($1, $2, $3, $4, $5, $6);

-- name: RefusalList
SELECT id, agent_id, session_id, tool, operation_key, code, detail, created_at
FROM refusals
ORDER BY id DESC
LIMIT $1;
