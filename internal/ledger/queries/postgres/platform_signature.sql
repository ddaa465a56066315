-- Platform signatures: the replay guard every API process shares.

-- name: PlatformSignatureClaim
-- Records signature $1 until $2. A live row refuses the claim (no row
-- returned); a row past its expiry is taken again. One statement, so of
-- concurrent claimers of one signature exactly one gets a row back.
INSERT INTO platform_signatures (id, expires_at)
VALUES ($1, $2)
ON CONFLICT (id) DO UPDATE SET expires_at = excluded.expires_at
WHERE platform_signatures.expires_at <= now()
RETURNING id;

-- name: PlatformSignaturePrune
-- Deletes up to $1 rows past their expiry, oldest first. Rows another
-- claimer is deleting are skipped rather than waited for.
DELETE FROM platform_signatures
WHERE id IN (
    SELECT id FROM platform_signatures
    WHERE expires_at <= now()
    ORDER BY expires_at
    LIMIT $1
    FOR UPDATE SKIP LOCKED
);

-- name: PlatformSignatureForget
DELETE FROM platform_signatures WHERE id = $1;
