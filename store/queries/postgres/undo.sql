-- name: UndoInsert
INSERT INTO undo_entries (id, session_id, operation_key, compensation_tool, compensation_version,
                          args_snapshot, status)
VALUES ($1, $2, $3, $4, $5, $6, 'pending')
RETURNING id, session_id, operation_key, seq, compensation_tool, compensation_version, args_snapshot,
          status, created_at, updated_at;

-- name: UndoListBySession
SELECT id, session_id, operation_key, seq, compensation_tool, compensation_version, args_snapshot,
       status, created_at, updated_at
FROM undo_entries
WHERE session_id = $1
ORDER BY seq DESC;

-- name: UndoDeleteByKey
DELETE FROM undo_entries
WHERE operation_key = $1;
