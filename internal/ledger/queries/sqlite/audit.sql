-- The money audit judges each effect by the effect class frozen when it
-- ran, not by the catalog running now: reclassifying or removing a money
-- tool must not hide its past effects. The frozen class is the one its
-- invocation was admitted under, else the one its claim recorded (a
-- rollback's compensation has no invocation), else, for rows from before
-- either was recorded, the tool's last classification in the append-only
-- registry history.

-- name: AuditMoneyEffectList
-- Each money effect that may have moved money, with its approval request
-- (NULL columns when there is none) and, from the append-only log, how many
-- tokens were spent on it and how many of those for another payload.
--
-- A compensation a rollback ran is audited like any other money effect:
-- its approval request is opened under the compensation's own key
-- ('undo-' || the entry's ID), so one run without a human shows here.
SELECT f.operation_key, f.tool, f.payload_hash, f.status,
       r.id, r.status, r.args_hash,
       (SELECT count(*) FROM approval_events v
        WHERE v.approval_id = r.id AND v.kind = 'token_used') AS tokens_used,
       (SELECT count(*) FROM approval_events v
        WHERE v.approval_id = r.id AND v.kind = 'token_used'
          AND v.args_hash_before <> f.payload_hash) AS tokens_used_for_other_args
FROM (SELECT e.operation_key, e.tool, e.payload_hash, e.status,
             COALESCE(i.effect_class, e.effect_class,
                      (SELECT h.effect FROM tool_registry_versions h
                       WHERE h.name = e.tool ORDER BY h.id DESC LIMIT 1)) AS effect_class
      FROM effects e
      LEFT JOIN invocations i ON i.operation_key = e.operation_key
      WHERE e.status IN ('succeeded', 'in_progress', 'needs_reconciliation')) f
LEFT JOIN approval_requests r ON r.operation_key = f.operation_key
WHERE f.effect_class = 'money'
ORDER BY f.operation_key;

-- name: AuditMoneyApprovalWithoutEffectList
-- Money requests whose token was spent but whose effect was never claimed.
SELECT r.operation_key, r.tool, r.id
FROM approval_requests r
LEFT JOIN invocations i ON i.operation_key = r.operation_key
WHERE COALESCE(i.effect_class,
               (SELECT h.effect FROM tool_registry_versions h
                WHERE h.name = r.tool ORDER BY h.id DESC LIMIT 1)) = 'money'
  AND EXISTS (SELECT 1 FROM approval_events v WHERE v.approval_id = r.id AND v.kind = 'token_used')
  AND NOT EXISTS (SELECT 1 FROM effects e WHERE e.operation_key = r.operation_key)
ORDER BY r.operation_key;

-- name: AuditClassChangedList
-- Tools whose effects ran under a class the current registry no longer
-- gives them (current_effect NULL: the tool left the catalog), one row per
-- tool and frozen class, with how many effects and the first key.
SELECT f.tool, f.effect_class, t.effect AS current_effect, count(*) AS effects,
       min(f.operation_key), min(f.catalog_version)
FROM (SELECT e.operation_key, e.tool,
             COALESCE(i.effect_class, e.effect_class) AS effect_class,
             COALESCE(i.catalog_version, e.catalog_version) AS catalog_version
      FROM effects e
      LEFT JOIN invocations i ON i.operation_key = e.operation_key
      WHERE e.status IN ('succeeded', 'in_progress', 'needs_reconciliation')) f
LEFT JOIN tool_registry t ON t.name = f.tool
WHERE f.effect_class IS NOT NULL AND (t.effect IS NULL OR t.effect <> f.effect_class)
GROUP BY f.tool, f.effect_class, t.effect
ORDER BY f.tool, f.effect_class;
