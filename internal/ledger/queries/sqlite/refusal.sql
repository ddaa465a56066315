-- name: RefusalInsert
INSERT INTO refusals (agent_id, session_id, tool, operation_key, code, detail)
VALUES ($1, $2, $3, $4, $5, $6);

-- name: RefusalList
SELECT id, agent_id, session_id, tool, operation_key, code, detail, created_at
FROM refusals
ORDER BY id DESC
LIMIT $1;

-- name: RefusalPage
-- Newest first. $1…$5 filter (code, tool, agent, created at or after,
-- created before; empty or NULL for any); $6…$8 are the cursor (rank
-- unused, time, ID; NULL for the first page); $9 the page's length.
SELECT id, agent_id, session_id, tool, operation_key, code, detail, created_at
FROM refusals
WHERE ($1 = '' OR code = $1) AND ($2 = '' OR tool = $2) AND ($3 = '' OR agent_id = $3)
  AND ($4 IS NULL OR created_at >= $4) AND ($5 IS NULL OR created_at < $5)
  AND ($6 IS NULL OR (created_at, id) < ($7, CAST($8 AS INTEGER)))
ORDER BY created_at DESC, id DESC
LIMIT $9;

-- name: RefusalCount
SELECT count(*)
FROM refusals
WHERE ($1 = '' OR code = $1) AND ($2 = '' OR tool = $2) AND ($3 = '' OR agent_id = $3)
  AND ($4 IS NULL OR created_at >= $4) AND ($5 IS NULL OR created_at < $5);
