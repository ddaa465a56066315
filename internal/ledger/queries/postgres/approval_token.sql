-- Expiry uses the database's clock, like leases do. TTLs arrive in
-- milliseconds.

-- name: ApprovalTokenInsert
INSERT INTO approval_tokens (id, approval_id, args_hash, expires_at)
VALUES ($1, $2, $3, now() + $4::bigint * interval '1 millisecond')
RETURNING id, approval_id, args_hash, expires_at, used_at, used_by, created_at;

-- name: ApprovalTokenDeleteUnused
DELETE FROM approval_tokens
WHERE approval_id = $1 AND used_at IS NULL
RETURNING id;

-- name: ApprovalTokenSpend
-- The spend is this one statement: whatever else runs concurrently, a
-- token's used_at goes from NULL to a time at most once.
UPDATE approval_tokens
SET used_at = now(), used_by = $3
WHERE approval_id = $1 AND args_hash = $2 AND used_at IS NULL AND expires_at > now()
RETURNING id, approval_id, args_hash, expires_at, used_at, used_by, created_at;

-- name: ApprovalTokenGetLatest
-- A spent token sorts first: once a request's token is spent, that is the
-- fact that decides every later spend or mint.
SELECT id, approval_id, args_hash, expires_at, used_at, used_by, created_at,
       expires_at <= now() AS expired
FROM approval_tokens
WHERE approval_id = $1
ORDER BY used_at IS NULL, created_at DESC
LIMIT 1;

-- name: ApprovalTokenMintForClaimCTE
-- The mint of a claim's pipeline (EffectClaim): request $1, which a policy
-- approved for arguments hash $2 and which has no token yet, gets token $3
-- of $4 milliseconds, and the mint is logged as its policy's, with the
-- detail mintToken would write (a time as Go's JSON writes it). Anything
-- else mints nothing, and the claim is made step by step.
WITH req AS (
    SELECT id, args_hash, decided_by
    FROM approval_requests
    WHERE id = $1 AND status = 'auto_approved' AND args_hash = $2 AND coalesce(decided_by, '') <> ''
      AND $4::bigint > 0
      AND NOT EXISTS (SELECT 1 FROM approval_tokens WHERE approval_id = $1)
), minted AS (
    INSERT INTO approval_tokens (id, approval_id, args_hash, expires_at)
    SELECT $3::text, id, args_hash, now() + $4::bigint * interval '1 millisecond'
    FROM req
    RETURNING id, approval_id, args_hash, expires_at, used_at, used_by, created_at
), logged AS (
    INSERT INTO approval_events (approval_id, kind, actor, args_hash_before, args_hash_after, detail)
    SELECT m.approval_id, 'token_minted', r.decided_by, m.args_hash, NULL,
           jsonb_build_object(
               'token_id', m.id,
               'expires_at', regexp_replace(to_char(m.expires_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US'),
                                            '\.?0+$', '') || 'Z')
    FROM minted m
    JOIN req r ON r.id = m.approval_id
    RETURNING id
)
SELECT m.id, m.approval_id, m.args_hash, m.expires_at, m.used_at, m.used_by, m.created_at
FROM minted m, logged;

-- name: ApprovalTokenSpendForClaimCTE
-- The spend of a claim's pipeline (EffectClaim), logged as spendLocked
-- logs it: request $1 must be approved for arguments hash $2, and the
-- token spent by $3 is the one the pipeline minted ($4) for a request a
-- policy approved, or the one the decision minted for a request a person
-- approved. No row: nothing was spent, and the claim is made step by step.
WITH spent AS (
    UPDATE approval_tokens t
    SET used_at = now(), used_by = $3
    FROM approval_requests r
    WHERE r.id = $1 AND r.args_hash = $2
      AND (r.status = 'approved' OR (r.status = 'auto_approved' AND t.id = $4::text))
      AND t.approval_id = $1 AND t.args_hash = $2 AND t.used_at IS NULL AND t.expires_at > now()
    RETURNING t.id, t.approval_id, t.args_hash, t.expires_at, t.used_at, t.used_by, t.created_at
), logged AS (
    INSERT INTO approval_events (approval_id, kind, actor, args_hash_before, args_hash_after, detail)
    SELECT approval_id, 'token_used', $3, args_hash, NULL, jsonb_build_object('token_id', id)
    FROM spent
    RETURNING id
)
SELECT s.id, s.approval_id, s.args_hash, s.expires_at, s.used_at, s.used_by, s.created_at
FROM spent s, logged;
