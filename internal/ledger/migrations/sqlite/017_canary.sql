-- The reality canary: what each scheduled (or requested) run found when it
-- fired a tool at its provider's test facilities and read the effect back
-- from the provider. One row per tool per run; the last row of a tool is
-- its state, and a tool that requires a green canary is withheld from
-- agents while that row says it failed.
CREATE TABLE canary_results (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id     TEXT    NOT NULL CHECK (run_id <> ''),
    tool       TEXT    NOT NULL CHECK (tool <> ''),
    ok         INTEGER NOT NULL CHECK (ok IN (0, 1)),
    detail     TEXT    NOT NULL DEFAULT '',
    receipt    TEXT    CHECK (json_valid(receipt)),
    checked_at TEXT    NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);

CREATE INDEX canary_results_tool ON canary_results (tool, id DESC);
CREATE INDEX canary_results_run ON canary_results (run_id);
