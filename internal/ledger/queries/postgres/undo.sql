-- name: UndoInsert
INSERT INTO undo_entries (id, session_id, operation_key, compensation_tool, compensation_version,
                          args_snapshot, status)
VALUES ($1, $2, $3, $4, $5, $6, 'pending')
RETURNING id, session_id, operation_key, seq, compensation_tool, compensation_version, args_snapshot,
          status, detail, created_at, updated_at;

-- name: UndoListBySession
SELECT id, session_id, operation_key, seq, compensation_tool, compensation_version, args_snapshot,
       status, detail, created_at, updated_at
FROM undo_entries
WHERE session_id = $1
ORDER BY seq DESC;

-- name: UndoDeleteByKey
DELETE FROM undo_entries
WHERE operation_key = $1;

-- name: UndoGet
SELECT id, session_id, operation_key, seq, compensation_tool, compensation_version, args_snapshot,
       status, detail, created_at, updated_at
FROM undo_entries
WHERE id = $1;

-- name: UndoGetForUpdate
SELECT id, session_id, operation_key, seq, compensation_tool, compensation_version, args_snapshot,
       status, detail, created_at, updated_at
FROM undo_entries
WHERE id = $1
FOR UPDATE;

-- name: UndoSetStatus
-- $2 is compensated, skipped or failed, which a pending entry may become.
-- A failed one may still become compensated or skipped, when a retry after
-- a human's fix succeeds or shows there is nothing left to undo.
-- compensated and skipped are final.
UPDATE undo_entries
SET status = $2, detail = $3, updated_at = now()
WHERE id = $1 AND (status = 'pending' OR (status = 'failed' AND $2 IN ('compensated', 'skipped')))
RETURNING id, session_id, operation_key, seq, compensation_tool, compensation_version, args_snapshot,
          status, detail, created_at, updated_at;

-- name: UndoCloseByHand
-- The entries a rollback could not run, closed by an operator who undid
-- their effects by hand: failed ones, and pending ones a rollback held
-- (their detail says why). Pending entries no rollback reached stay
-- pending.
UPDATE undo_entries
SET status = 'compensated', detail = $2, updated_at = now()
WHERE session_id = $1 AND (status = 'failed' OR (status = 'pending' AND detail IS NOT NULL));
