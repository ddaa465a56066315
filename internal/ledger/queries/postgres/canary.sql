-- name: CanaryResultInsert
INSERT INTO canary_results (run_id, tool, ok, detail, receipt)
VALUES ($1, $2, $3, $4, $5);

-- name: CanaryLastResults
-- Each tool's last result, with the time of its last success (NULL when
-- it never passed).
SELECT r.run_id, r.tool, r.ok, r.detail, r.receipt, r.checked_at,
       (SELECT max(s.checked_at) FROM canary_results s WHERE s.tool = r.tool AND s.ok)
FROM canary_results r
WHERE r.id = (SELECT max(l.id) FROM canary_results l WHERE l.tool = r.tool)
ORDER BY r.tool;

-- name: CanaryRunResults
SELECT run_id, tool, ok, detail, receipt, checked_at, NULL
FROM canary_results
WHERE run_id = $1
ORDER BY tool;
