-- Console sessions: signed-in operators of the browser console.

-- name: ConsoleSessionInsert
INSERT INTO console_sessions (id_hash, operator_id, csrf_token, expires_at, key_binding)
VALUES ($1, $2, $3, $4, $5);

-- name: ConsoleSessionGet
-- A session past its expiry reads as absent.
SELECT operator_id, csrf_token, created_at, expires_at, key_binding
FROM console_sessions
WHERE id_hash = $1 AND expires_at > now();

-- name: ConsoleSessionDelete
DELETE FROM console_sessions WHERE id_hash = $1;

-- name: ConsoleSessionPrune
-- Deletes up to $1 expired sessions, oldest first, skipping rows another
-- sign-in is deleting.
DELETE FROM console_sessions
WHERE id_hash IN (
    SELECT id_hash FROM console_sessions
    WHERE expires_at <= now()
    ORDER BY expires_at
    LIMIT $1
    FOR UPDATE SKIP LOCKED
);
