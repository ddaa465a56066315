-- name: MetricsInvocationCounts
SELECT tool, route, state, count(*)
FROM invocations
GROUP BY tool, route, state;

-- name: MetricsRefusalCounts
SELECT code, count(*)
FROM refusals
GROUP BY code;

-- name: MetricsApprovalsPending
SELECT count(*)
FROM approval_requests
WHERE status = 'pending';

-- name: MetricsApprovalOldestPending
SELECT created_at
FROM approval_requests
WHERE status = 'pending'
ORDER BY created_at
LIMIT 1;

-- name: MetricsReconciliationsOpen
-- Held effects, post-call work and signals: what the reconciliation list
-- shows.
SELECT 'effect', count(*) FROM effects WHERE status = 'needs_reconciliation'
UNION ALL
SELECT 'post_call', count(*) FROM postcall_items WHERE status = 'held'
UNION ALL
SELECT 'signal', count(*) FROM signal_outbox WHERE held_at IS NOT NULL AND delivered_at IS NULL AND abandoned_at IS NULL;

-- name: MetricsCompensationCounts
-- A pending entry has not been attempted; every other status is the
-- outcome of a compensation.
SELECT status, count(*)
FROM undo_entries
WHERE status <> 'pending'
GROUP BY status;

-- name: MetricsSessionsRolledBack
SELECT count(DISTINCT session_id)
FROM undo_entries
WHERE status <> 'pending';
