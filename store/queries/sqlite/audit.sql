-- The money audit reads the same tool_registry rows the router reads, so
-- a tool reclassified as money is audited from the moment it is synced.

-- name: AuditMoneyEffectList
-- Each money effect that may have moved money, with its approval request
-- (NULL columns when there is none) and, from the append-only log, how many
-- tokens were spent on it and how many of those for another payload.
--
-- A compensation a rollback ran is audited like any other money effect:
-- its approval request is opened under the compensation's own key
-- ('undo-' || the entry's ID), so one run without a human shows here.
SELECT e.operation_key, e.tool, e.payload_hash, e.status,
       r.id, r.status, r.args_hash,
       (SELECT count(*) FROM approval_events v
        WHERE v.approval_id = r.id AND v.kind = 'token_used') AS tokens_used,
       (SELECT count(*) FROM approval_events v
        WHERE v.approval_id = r.id AND v.kind = 'token_used'
          AND v.args_hash_before <> e.payload_hash) AS tokens_used_for_other_args
FROM effects e
JOIN tool_registry t ON t.name = e.tool
LEFT JOIN approval_requests r ON r.operation_key = e.operation_key
WHERE t.effect = 'money' AND e.status IN ('succeeded', 'in_progress', 'needs_reconciliation')
ORDER BY e.operation_key;

-- name: AuditMoneyApprovalWithoutEffectList
-- Money requests whose token was spent but whose effect was never claimed.
SELECT r.operation_key, r.tool, r.id
FROM approval_requests r
JOIN tool_registry t ON t.name = r.tool
WHERE t.effect = 'money'
  AND EXISTS (SELECT 1 FROM approval_events v WHERE v.approval_id = r.id AND v.kind = 'token_used')
  AND NOT EXISTS (SELECT 1 FROM effects e WHERE e.operation_key = r.operation_key)
ORDER BY r.operation_key;
