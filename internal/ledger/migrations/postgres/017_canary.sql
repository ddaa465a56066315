-- The reality canary: what each scheduled (or requested) run found when it
-- fired a tool at its provider's test facilities and read the effect back
-- from the provider. One row per tool per run; the last row of a tool is
-- its state, and a tool that requires a green canary is withheld from
-- agents while that row says it failed.
CREATE TABLE canary_results (
    id         bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    run_id     text        NOT NULL CHECK (run_id <> ''),
    tool       text        NOT NULL CHECK (tool <> ''),
    ok         boolean     NOT NULL,
    detail     text        NOT NULL DEFAULT '',
    receipt    jsonb,
    checked_at timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX canary_results_tool ON canary_results (tool, id DESC);
CREATE INDEX canary_results_run ON canary_results (run_id);
