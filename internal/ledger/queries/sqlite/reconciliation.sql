-- name: ReconciliationEventInsert
INSERT INTO reconciliation_events (operation_key, kind, actor, reason, receipt)
VALUES ($1, $2, $3, $4, $5)
RETURNING id, operation_key, kind, actor, reason, receipt, created_at;

-- name: ReconciliationEventListByKey
SELECT id, operation_key, kind, actor, reason, receipt, created_at
FROM reconciliation_events
WHERE operation_key = $1
ORDER BY id;

-- name: EffectGetForReconcile
-- No FOR UPDATE in SQLite, and none needed: the transaction began IMMEDIATE
-- and holds the database's write lock until it ends.
SELECT operation_key, invocation_id, tool, payload_hash, status, lease_owner, lease_expires_at,
       attempts, before_state, after_state, receipt, result, error, created_at, updated_at
FROM effects
WHERE operation_key = $1;

-- name: EffectSettleHeld
-- Only an effect held for reconciliation moves; the lease plays no part, as
-- no attempt is running. after_state is kept when the decision brings none.
UPDATE effects
SET status = $2, receipt = $3, after_state = coalesce($4, after_state), result = $5, error = $6,
    updated_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
WHERE operation_key = $1 AND status = 'needs_reconciliation'
RETURNING operation_key, invocation_id, tool, payload_hash, status, lease_owner, lease_expires_at,
          attempts, before_state, after_state, receipt, result, error, created_at, updated_at;

-- name: EffectListByReceiptID
-- rowid breaks ties within a millisecond in insertion order.
SELECT operation_key, invocation_id, tool, payload_hash, status, lease_owner, lease_expires_at,
       attempts, before_state, after_state, receipt, result, error, created_at, updated_at
FROM effects
WHERE receipt IS NOT NULL AND json_extract(receipt, '$.id') = $1
ORDER BY created_at, rowid;

-- name: ReconciliationPage
-- What ops must look at, as one queue: post-call work and signals held
-- for a human first (a caller waits on a promise nothing kept; a held
-- call-ended signal started no post-call work at all), then held money, then
-- the other held effects, then the sends whose message the provider then
-- reported undelivered; oldest first within each. Money is judged by the
-- class frozen when the effect was claimed or its call admitted, else by
-- the tool's current class. $1…$5
-- filter (kind, tool, agent, at or after, before; empty or NULL for
-- any); $6…$8 are the cursor (rank, time, key; NULL for the first page);
-- $9 the page's length.
SELECT kind, rank, at, sort_key, session_id, item_key
FROM (
    SELECT 'held_postcall' AS kind, 0 AS rank, p.updated_at AS at, p.operation_key AS sort_key,
           p.session_id AS session_id, p.item_key AS item_key, p.tool AS tool, s.agent_id AS agent_id
    FROM postcall_items p
    LEFT JOIN sessions s ON s.id = p.session_id
    WHERE p.status = 'held'
    UNION ALL
    SELECT 'held_signal', 0, o.held_at, 'signal:' || o.id, '', '', o.signal_name, s.agent_id
    FROM signal_outbox o
    -- The session ID is cut from the workflow ID, so the sessions key serves the join.
    LEFT JOIN sessions s ON o.workflow_id LIKE 'session/%' AND s.id = substr(o.workflow_id, 9)
    WHERE o.held_at IS NOT NULL AND o.delivered_at IS NULL AND o.abandoned_at IS NULL
    UNION ALL
    SELECT 'held_effect', CASE WHEN coalesce(e.effect_class, i.effect_class, r.effect) = 'money' THEN 1 ELSE 2 END,
           e.created_at, e.operation_key, '', '', e.tool, i.agent_id
    FROM effects e
    LEFT JOIN invocations i ON i.id = e.invocation_id
    LEFT JOIN tool_registry r ON r.name = e.tool
    WHERE e.status = 'needs_reconciliation'
    UNION ALL
    SELECT 'undelivered', 3, m.updated_at, e.operation_key, '', '', e.tool, i.agent_id
    FROM message_statuses m
    JOIN effects e ON e.receipt IS NOT NULL AND json_extract(e.receipt, '$.fields.message_sid') = m.message_id
    LEFT JOIN invocations i ON i.id = e.invocation_id
    WHERE m.provider = 'twilio' AND m.status IN ('undelivered', 'failed', 'canceled') AND e.status = 'succeeded'
) q
WHERE ($1 = '' OR kind = $1) AND ($2 = '' OR tool = $2) AND ($3 = '' OR agent_id = $3)
  AND ($4 IS NULL OR at >= $4) AND ($5 IS NULL OR at < $5)
  AND ($6 IS NULL OR (rank, at, sort_key) > ($6, $7, $8))
ORDER BY rank, at, sort_key
LIMIT $9;

-- name: ReconciliationCount
SELECT count(*)
FROM (
    SELECT 'held_postcall' AS kind, p.updated_at AS at, p.tool AS tool, s.agent_id AS agent_id
    FROM postcall_items p
    LEFT JOIN sessions s ON s.id = p.session_id
    WHERE p.status = 'held'
    UNION ALL
    SELECT 'held_signal', o.held_at, o.signal_name, s.agent_id
    FROM signal_outbox o
    -- The session ID is cut from the workflow ID, so the sessions key serves the join.
    LEFT JOIN sessions s ON o.workflow_id LIKE 'session/%' AND s.id = substr(o.workflow_id, 9)
    WHERE o.held_at IS NOT NULL AND o.delivered_at IS NULL AND o.abandoned_at IS NULL
    UNION ALL
    SELECT 'held_effect', e.created_at, e.tool, i.agent_id
    FROM effects e
    LEFT JOIN invocations i ON i.id = e.invocation_id
    WHERE e.status = 'needs_reconciliation'
    UNION ALL
    SELECT 'undelivered', m.updated_at, e.tool, i.agent_id
    FROM message_statuses m
    JOIN effects e ON e.receipt IS NOT NULL AND json_extract(e.receipt, '$.fields.message_sid') = m.message_id
    LEFT JOIN invocations i ON i.id = e.invocation_id
    WHERE m.provider = 'twilio' AND m.status IN ('undelivered', 'failed', 'canceled') AND e.status = 'succeeded'
) q
WHERE ($1 = '' OR kind = $1) AND ($2 = '' OR tool = $2) AND ($3 = '' OR agent_id = $3)
  AND ($4 IS NULL OR at >= $4) AND ($5 IS NULL OR at < $5);
