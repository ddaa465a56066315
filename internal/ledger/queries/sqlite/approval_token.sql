-- Expiry uses the database's clock, like leases do. TTLs arrive in
-- milliseconds.

-- name: ApprovalTokenInsert
INSERT INTO approval_tokens (id, approval_id, args_hash, expires_at)
VALUES ($1, $2, $3, strftime('%Y-%m-%dT%H:%M:%fZ', 'now', ($4 / 1000.0) || ' seconds'))
RETURNING id, approval_id, args_hash, expires_at, used_at, used_by, created_at;

-- name: ApprovalTokenDeleteUnused
DELETE FROM approval_tokens
WHERE approval_id = $1 AND used_at IS NULL
RETURNING id;

-- name: ApprovalTokenSpend
-- The spend is this one statement: whatever else runs concurrently, a
-- token's used_at goes from NULL to a time at most once.
UPDATE approval_tokens
SET used_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), used_by = $3
WHERE approval_id = $1 AND args_hash = $2 AND used_at IS NULL
  AND expires_at > strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
RETURNING id, approval_id, args_hash, expires_at, used_at, used_by, created_at;

-- name: ApprovalTokenGetLatest
-- A spent token sorts first: once a request's token is spent, that is the
-- fact that decides every later spend or mint. rowid breaks ties within a
-- millisecond in insertion order.
SELECT id, approval_id, args_hash, expires_at, used_at, used_by, created_at,
       expires_at <= strftime('%Y-%m-%dT%H:%M:%fZ', 'now') AS expired
FROM approval_tokens
WHERE approval_id = $1
ORDER BY used_at IS NULL, created_at DESC, rowid DESC
LIMIT 1;
