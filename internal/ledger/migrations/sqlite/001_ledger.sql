-- The ledger: the catalog mirror, refusals, invocations, the idempotency
-- ledger of effects, undo stacks, deferred work and approval requests.
--
-- Kept as close to the PostgreSQL schema as SQLite allows. JSON is TEXT,
-- checked with json_valid. Timestamps are TEXT in one fixed-width UTC form,
-- 2006-01-02T15:04:05.000Z, so that comparing strings compares instants;
-- the same form is written by strftime('%Y-%m-%dT%H:%M:%fZ', 'now') here
-- and by the store for times that come from Go.
--
-- Optional text is NULL, never '', so "IS NOT NULL" constraints mean what
-- they say.

CREATE TABLE tool_registry (
    name              TEXT NOT NULL PRIMARY KEY,
    effect            TEXT NOT NULL CHECK (effect IN ('read', 'write', 'money')),
    delivery          TEXT NOT NULL CHECK (delivery IN ('readonly', 'real-sync', 'record-deferred')),
    reversibility     TEXT NOT NULL CHECK (reversibility IN ('none', 'compensable', 'irreversible')),
    compensation_tool TEXT CHECK (compensation_tool <> ''),
    approver_role     TEXT CHECK (approver_role <> ''),
    connector_kind    TEXT NOT NULL,
    owner             TEXT NOT NULL,
    catalog_hash      TEXT NOT NULL,
    synced_at         TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    CONSTRAINT tool_registry_compensable_names_compensation
        CHECK (reversibility <> 'compensable' OR compensation_tool IS NOT NULL),
    CONSTRAINT tool_registry_money_names_approver
        CHECK (effect <> 'money' OR approver_role IS NOT NULL),
    CONSTRAINT tool_registry_read_is_readonly
        CHECK (effect <> 'read' OR delivery = 'readonly')
);

CREATE TABLE refusals (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    agent_id      TEXT,
    session_id    TEXT,
    tool          TEXT,
    operation_key TEXT,
    code          TEXT NOT NULL,
    detail        TEXT,
    created_at    TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);

CREATE TABLE invocations (
    id            TEXT NOT NULL PRIMARY KEY,
    operation_key TEXT NOT NULL UNIQUE,
    session_id    TEXT,
    agent_id      TEXT,
    tool          TEXT NOT NULL,
    args          TEXT NOT NULL CHECK (json_valid(args)),
    args_hash     TEXT NOT NULL,
    route         TEXT NOT NULL
        CHECK (route IN ('read', 'write', 'compensable', 'gated', 'deferred')),
    state         TEXT NOT NULL
        CHECK (state IN ('running', 'awaiting_approval', 'succeeded', 'failed', 'recorded',
                         'rejected', 'timed_out', 'needs_reconciliation')),
    observation   TEXT CHECK (json_valid(observation)),
    workflow_id   TEXT,
    created_at    TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    updated_at    TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);

CREATE INDEX invocations_session_id_created_at_idx ON invocations (session_id, created_at);

-- One row per operation key: the arbiter of exactly-once. A row in
-- in_progress is leased to lease_owner until lease_expires_at.
CREATE TABLE effects (
    operation_key    TEXT    NOT NULL PRIMARY KEY,
    invocation_id    TEXT,
    tool             TEXT    NOT NULL,
    payload_hash     TEXT    NOT NULL,
    status           TEXT    NOT NULL
        CHECK (status IN ('in_progress', 'succeeded', 'failed', 'needs_reconciliation')),
    lease_owner      TEXT    NOT NULL,
    lease_expires_at TEXT    NOT NULL,
    attempts         INTEGER NOT NULL DEFAULT 1 CHECK (attempts > 0),
    before_state     TEXT CHECK (json_valid(before_state)),
    after_state      TEXT CHECK (json_valid(after_state)),
    receipt          TEXT CHECK (json_valid(receipt)),
    result           TEXT CHECK (json_valid(result)),
    error            TEXT,
    created_at       TEXT    NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    updated_at       TEXT    NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);

CREATE INDEX effects_status_created_at_idx ON effects (status, created_at);

-- seq is the primary key because SQLite assigns numbers only to an INTEGER
-- PRIMARY KEY; AUTOINCREMENT keeps it from ever reusing a number, so LIFO
-- order stays strict.
CREATE TABLE undo_entries (
    seq                  INTEGER PRIMARY KEY AUTOINCREMENT,
    id                   TEXT NOT NULL UNIQUE,
    session_id           TEXT NOT NULL,
    operation_key        TEXT NOT NULL UNIQUE REFERENCES effects (operation_key),
    compensation_tool    TEXT NOT NULL,
    compensation_version TEXT,
    args_snapshot        TEXT CHECK (json_valid(args_snapshot)),
    status               TEXT NOT NULL
        CHECK (status IN ('pending', 'compensated', 'failed', 'skipped')),
    created_at           TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    updated_at           TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);

CREATE INDEX undo_entries_session_id_seq_idx ON undo_entries (session_id, seq);

CREATE TABLE deferred_items (
    id            TEXT NOT NULL PRIMARY KEY,
    session_id    TEXT NOT NULL,
    operation_key TEXT NOT NULL UNIQUE,
    tool          TEXT NOT NULL,
    args          TEXT NOT NULL CHECK (json_valid(args)),
    status        TEXT NOT NULL CHECK (status IN ('recorded', 'delivered', 'failed')),
    receipt       TEXT CHECK (json_valid(receipt)),
    reason        TEXT,
    created_at    TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    updated_at    TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);

CREATE INDEX deferred_items_session_id_created_at_idx ON deferred_items (session_id, created_at);

CREATE TABLE approval_requests (
    id            TEXT NOT NULL PRIMARY KEY,
    invocation_id TEXT NOT NULL,
    operation_key TEXT NOT NULL UNIQUE,
    session_id    TEXT,
    agent_id      TEXT,
    tool          TEXT NOT NULL,
    args          TEXT NOT NULL CHECK (json_valid(args)),
    args_hash     TEXT NOT NULL,
    approver_role TEXT,  -- empty when only a rule may approve
    reason        TEXT,
    risk_tags     TEXT NOT NULL DEFAULT '[]' CHECK (json_type(risk_tags) = 'array'),
    context       TEXT CHECK (json_valid(context)),
    status        TEXT NOT NULL
        CHECK (status IN ('pending', 'approved', 'rejected', 'timed_out', 'auto_approved')),
    timeout_at    TEXT NOT NULL,
    decided_by    TEXT,
    decided_at    TEXT,
    created_at    TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    CONSTRAINT approval_requests_decided_iff_final
        CHECK ((status = 'pending') = (decided_at IS NULL))
);

CREATE INDEX approval_requests_status_created_at_idx ON approval_requests (status, created_at);
