-- name: EffectReceiptStatusUpdate
-- Only the receipt's status moves: the provider ID, fields and issue time
-- stay those of the response that proved the effect.
UPDATE effects
SET receipt = json_set(receipt, '$.status', $2),
    updated_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
WHERE receipt IS NOT NULL AND json_extract(receipt, '$.id') = $1
RETURNING operation_key, invocation_id, tool, payload_hash, status, lease_owner, lease_expires_at,
          attempts, before_state, after_state, receipt, result, error, created_at, updated_at;
