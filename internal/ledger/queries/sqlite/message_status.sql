-- name: MessageStatusCallbackInsert
-- No conflict target: a repeat of the same status for the message and a
-- reused idempotency token are both replays, and both insert nothing.
INSERT INTO message_status_callbacks (provider, message_id, status, error_code, idempotency_token)
VALUES ($1, $2, $3, $4, $5)
ON CONFLICT DO NOTHING
RETURNING id;

-- name: MessageStatusInsert
INSERT INTO message_statuses (provider, message_id, status, error_code, recipient)
VALUES ($1, $2, $3, $4, $5)
ON CONFLICT (provider, message_id) DO NOTHING
RETURNING provider, message_id, status, recipient, error_code, created_at, updated_at;

-- name: MessageStatusGetForUpdate
-- No FOR UPDATE in SQLite, and none needed: the transaction began IMMEDIATE
-- and holds the database's write lock until it ends.
SELECT provider, message_id, status, recipient, error_code, created_at, updated_at
FROM message_statuses
WHERE provider = $1 AND message_id = $2;

-- name: MessageStatusUpdate
UPDATE message_statuses
SET status = $3, error_code = $4, recipient = COALESCE(recipient, $5),
    updated_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
WHERE provider = $1 AND message_id = $2
RETURNING provider, message_id, status, recipient, error_code, created_at, updated_at;

-- name: MessageStatusGet
SELECT provider, message_id, status, recipient, error_code, created_at, updated_at
FROM message_statuses
WHERE provider = $1 AND message_id = $2;

-- name: MessageStatusListBySession
SELECT e.operation_key, e.invocation_id, e.tool, e.payload_hash, e.status, e.lease_owner, e.lease_expires_at,
       e.attempts, e.before_state, e.after_state, e.receipt, e.result, e.error, e.created_at, e.updated_at,
       m.provider, m.message_id, m.status, m.recipient, m.error_code, m.created_at, m.updated_at
FROM invocations i
JOIN effects e ON e.operation_key = i.operation_key
JOIN message_statuses m ON m.provider = 'twilio' AND m.message_id = json_extract(e.receipt, '$.fields.message_sid')
WHERE i.session_id = $1 AND e.receipt IS NOT NULL
ORDER BY i.created_at, i.id;

-- name: MessageStatusListFailed
SELECT e.operation_key, e.invocation_id, e.tool, e.payload_hash, e.status, e.lease_owner, e.lease_expires_at,
       e.attempts, e.before_state, e.after_state, e.receipt, e.result, e.error, e.created_at, e.updated_at,
       m.provider, m.message_id, m.status, m.recipient, m.error_code, m.created_at, m.updated_at
FROM message_statuses m
JOIN effects e ON e.receipt IS NOT NULL AND json_extract(e.receipt, '$.fields.message_sid') = m.message_id
WHERE m.provider = 'twilio' AND m.status IN ('undelivered', 'failed', 'canceled') AND e.status = 'succeeded'
ORDER BY m.updated_at, m.message_id, e.operation_key
LIMIT $1;
