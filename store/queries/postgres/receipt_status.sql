-- name: EffectReceiptStatusUpdate
-- Only the receipt's status moves: the provider ID, fields and issue time
-- stay those of the response that proved the effect.
UPDATE effects
SET receipt = jsonb_set(receipt, '{status}', to_jsonb($2::text)), updated_at = now()
WHERE receipt IS NOT NULL AND receipt ->> 'id' = $1
RETURNING operation_key, invocation_id, tool, payload_hash, status, lease_owner, lease_expires_at,
          attempts, before_state, after_state, receipt, result, error, created_at, updated_at;
