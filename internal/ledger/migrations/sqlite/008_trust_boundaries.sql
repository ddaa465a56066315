-- Trust boundaries: who vouches for each session fact, and signals that
-- must reach their workflow. Kept as close to the PostgreSQL schema as
-- SQLite allows; see there for the reasons.
ALTER TABLE sessions
    ADD COLUMN fact_provenance TEXT NOT NULL DEFAULT '{}'
        CHECK (json_type(fact_provenance) = 'object');

CREATE TABLE signal_outbox (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    workflow_id     TEXT NOT NULL CHECK (workflow_id <> ''),
    signal_name     TEXT NOT NULL CHECK (signal_name <> ''),
    payload         TEXT NOT NULL CHECK (json_valid(payload)),
    approval_id     TEXT,
    attempts        INTEGER NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    last_error      TEXT,
    next_attempt_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    created_at      TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    delivered_at    TEXT,
    -- Set when the workflow is gone, so no attempt can ever deliver it.
    abandoned_at    TEXT,
    CONSTRAINT signal_outbox_delivered_or_abandoned
        CHECK (delivered_at IS NULL OR abandoned_at IS NULL)
);

CREATE INDEX signal_outbox_due_idx ON signal_outbox (next_attempt_at) WHERE delivered_at IS NULL AND abandoned_at IS NULL;
