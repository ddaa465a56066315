-- The signal outbox: signals a committed decision owes its workflow,
-- written in the decision's transaction and delivered by a relay.

-- name: OutboxInsert
-- $5 true queues a signal already delivered on its one attempt, made while
-- the transaction that writes it was open.
INSERT INTO signal_outbox (workflow_id, signal_name, payload, approval_id, attempts, delivered_at)
VALUES ($1, $2, $3, $4, CASE WHEN $5 THEN 1 ELSE 0 END, CASE WHEN $5 THEN strftime('%Y-%m-%dT%H:%M:%fZ', 'now') END)
RETURNING id, workflow_id, signal_name, payload, approval_id, attempts, last_error, next_attempt_at, created_at, delivered_at, abandoned_at, held_at;

-- name: OutboxListDue
-- Undelivered signals whose next attempt is due, oldest first.
SELECT id, workflow_id, signal_name, payload, approval_id, attempts, last_error, next_attempt_at, created_at, delivered_at, abandoned_at, held_at
FROM signal_outbox
WHERE delivered_at IS NULL AND abandoned_at IS NULL AND held_at IS NULL AND next_attempt_at <= strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
ORDER BY next_attempt_at, id
LIMIT $1;

-- name: OutboxGet
SELECT id, workflow_id, signal_name, payload, approval_id, attempts, last_error, next_attempt_at, created_at, delivered_at, abandoned_at, held_at
FROM signal_outbox
WHERE id = $1;

-- name: OutboxMarkDelivered
UPDATE signal_outbox
SET delivered_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), attempts = attempts + 1, last_error = NULL
WHERE id = $1 AND delivered_at IS NULL AND abandoned_at IS NULL AND held_at IS NULL;

-- name: OutboxMarkFailed
-- One more failed attempt; the next is due after $3 milliseconds.
UPDATE signal_outbox
SET attempts = attempts + 1, last_error = $2,
    next_attempt_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now', ($3 / 1000.0) || ' seconds')
WHERE id = $1 AND delivered_at IS NULL AND abandoned_at IS NULL AND held_at IS NULL;

-- name: OutboxMarkAbandoned
-- The workflow is gone: no attempt can ever deliver it.
UPDATE signal_outbox
SET abandoned_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), attempts = attempts + 1, last_error = $2
WHERE id = $1 AND delivered_at IS NULL AND abandoned_at IS NULL AND held_at IS NULL;

-- name: OutboxMarkHeld
-- Temporal refused the signal as invalid: every attempt would fail alike,
-- so it waits for a human.
UPDATE signal_outbox
SET held_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), attempts = attempts + 1, last_error = $2
WHERE id = $1 AND delivered_at IS NULL AND abandoned_at IS NULL AND held_at IS NULL;
