-- Agent callbacks: an invocation answered "pending" owes its agent one
-- signed delivery of the final observation. Kept as close to the
-- PostgreSQL schema as SQLite allows; see there for the reasons.
CREATE TABLE callback_deliveries (
    invocation_id   TEXT PRIMARY KEY REFERENCES invocations (id),
    agent_id        TEXT NOT NULL CHECK (agent_id <> ''),
    url             TEXT NOT NULL CHECK (url <> ''),
    status          TEXT NOT NULL DEFAULT 'pending'
        CHECK (status IN ('pending', 'delivered', 'failed')),
    attempts        INTEGER NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    last_error      TEXT,
    next_attempt_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    created_at      TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    delivered_at    TEXT,
    CONSTRAINT callback_deliveries_delivered_at
        CHECK ((status = 'delivered') = (delivered_at IS NOT NULL))
);

CREATE INDEX callback_deliveries_due_idx ON callback_deliveries (next_attempt_at) WHERE status = 'pending';
