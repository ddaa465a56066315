-- name: MessageStatusCallbackInsert
-- No conflict target: a repeat of the same status for the message and a
-- reused idempotency token are both replays, and both insert nothing.
INSERT INTO message_status_callbacks (provider, message_id, status, error_code, idempotency_token)
VALUES ($1, $2, $3, $4, $5)
ON CONFLICT DO NOTHING
RETURNING id;

-- name: MessageStatusInsert
-- The first word on a message, whichever status it is: callbacks are not
-- ordered, and the ledger may not know the message yet.
INSERT INTO message_statuses (provider, message_id, status, error_code, recipient)
VALUES ($1, $2, $3, $4, $5)
ON CONFLICT (provider, message_id) DO NOTHING
RETURNING provider, message_id, status, recipient, error_code, created_at, updated_at;

-- name: MessageStatusGetForUpdate
-- FOR UPDATE holds the row until the callback commits, so two callbacks for
-- one message are ordered by the rule rather than by who wrote last.
SELECT provider, message_id, status, recipient, error_code, created_at, updated_at
FROM message_statuses
WHERE provider = $1 AND message_id = $2
FOR UPDATE;

-- name: MessageStatusUpdate
-- The caller has checked that the new status supersedes the stored one. The
-- error code is the new status's own (a failure's reason); the recipient,
-- once known, stays.
UPDATE message_statuses
SET status = $3, error_code = $4, recipient = COALESCE(recipient, $5), updated_at = now()
WHERE provider = $1 AND message_id = $2
RETURNING provider, message_id, status, recipient, error_code, created_at, updated_at;

-- name: MessageStatusGet
SELECT provider, message_id, status, recipient, error_code, created_at, updated_at
FROM message_statuses
WHERE provider = $1 AND message_id = $2;

-- name: MessageStatusListBySession
-- Statuses join effects by the Twilio message SID in the receipt's fields,
-- which a page's receipt carries too; message_sid is Twilio's, so only
-- Twilio's statuses can match it.
SELECT e.operation_key, e.invocation_id, e.tool, e.payload_hash, e.status, e.lease_owner, e.lease_expires_at,
       e.attempts, e.before_state, e.after_state, e.receipt, e.result, e.error, e.created_at, e.updated_at,
       m.provider, m.message_id, m.status, m.recipient, m.error_code, m.created_at, m.updated_at
FROM invocations i
JOIN effects e ON e.operation_key = i.operation_key
JOIN message_statuses m ON m.provider = 'twilio' AND m.message_id = e.receipt -> 'fields' ->> 'message_sid'
WHERE i.session_id = $1 AND e.receipt IS NOT NULL
ORDER BY i.created_at, i.id;

-- name: MessageStatusListFailed
-- Effects the ledger settled as succeeded whose message then never reached
-- the handset: the statuses are those MessageStatus.Failed names.
SELECT e.operation_key, e.invocation_id, e.tool, e.payload_hash, e.status, e.lease_owner, e.lease_expires_at,
       e.attempts, e.before_state, e.after_state, e.receipt, e.result, e.error, e.created_at, e.updated_at,
       m.provider, m.message_id, m.status, m.recipient, m.error_code, m.created_at, m.updated_at
FROM message_statuses m
JOIN effects e ON e.receipt IS NOT NULL AND e.receipt -> 'fields' ->> 'message_sid' = m.message_id
WHERE m.provider = 'twilio' AND m.status IN ('undelivered', 'failed', 'canceled') AND e.status = 'succeeded'
ORDER BY m.updated_at, m.message_id, e.operation_key
LIMIT $1;
