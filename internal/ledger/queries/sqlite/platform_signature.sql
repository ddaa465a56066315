-- Platform signatures: the replay guard every API process shares.

-- name: PlatformSignatureClaim
-- Records signature $1 until $2. A live row refuses the claim (no row
-- returned); a row past its expiry is taken again.
INSERT INTO platform_signatures (id, expires_at)
VALUES ($1, $2)
ON CONFLICT (id) DO UPDATE SET expires_at = excluded.expires_at
WHERE platform_signatures.expires_at <= strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
RETURNING id;

-- name: PlatformSignaturePrune
-- Deletes up to $1 rows past their expiry, oldest first. SQLite has one
-- writer at a time, so the delete needs no row locks.
DELETE FROM platform_signatures
WHERE id IN (
    SELECT id FROM platform_signatures
    WHERE expires_at <= strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
    ORDER BY expires_at
    LIMIT $1
);

-- name: PlatformSignatureForget
DELETE FROM platform_signatures WHERE id = $1;
