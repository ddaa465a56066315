-- Agent callbacks: the final observation an invocation answered "pending"
-- owes its agent, delivered by a relay once the invocation is final.

-- name: CallbackOwe
-- Owed once per invocation: a second pending answer changes nothing.
INSERT INTO callback_deliveries (invocation_id, agent_id, url)
VALUES ($1, $2, $3)
ON CONFLICT (invocation_id) DO NOTHING;

-- name: CallbackGet
SELECT invocation_id, agent_id, url, status, attempts, last_error, next_attempt_at, created_at, delivered_at
FROM callback_deliveries
WHERE invocation_id = $1;

-- name: CallbackClaimDue
-- Claims pending callbacks whose invocation is final and whose next attempt
-- is due, oldest first, by pushing their next attempt $1 milliseconds out:
-- an attempt in flight is never claimed again until that lease runs out.
UPDATE callback_deliveries
SET next_attempt_at = now() + $1::bigint * interval '1 millisecond'
WHERE invocation_id IN (
    SELECT c.invocation_id
    FROM callback_deliveries c
    JOIN invocations i ON i.id = c.invocation_id
    WHERE c.status = 'pending' AND c.next_attempt_at <= now()
      AND i.state NOT IN ('running', 'awaiting_approval')
    ORDER BY c.next_attempt_at, c.invocation_id
    LIMIT $2
    FOR UPDATE OF c SKIP LOCKED
)
RETURNING invocation_id, agent_id, url, status, attempts, last_error, next_attempt_at, created_at, delivered_at;

-- name: CallbackMarkDelivered
UPDATE callback_deliveries
SET status = 'delivered', delivered_at = now(), attempts = attempts + 1, last_error = NULL
WHERE invocation_id = $1 AND status = 'pending';

-- name: CallbackMarkFailed
-- One more failed attempt; the next is due after $3 milliseconds.
UPDATE callback_deliveries
SET attempts = attempts + 1, last_error = $2,
    next_attempt_at = now() + $3::bigint * interval '1 millisecond'
WHERE invocation_id = $1 AND status = 'pending';

-- name: CallbackGiveUp
-- The last allowed attempt failed: no more are made.
UPDATE callback_deliveries
SET status = 'failed', attempts = attempts + 1, last_error = $2
WHERE invocation_id = $1 AND status = 'pending';
