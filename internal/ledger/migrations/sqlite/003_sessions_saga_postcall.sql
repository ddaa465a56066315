-- Sessions, the saga's outcomes and post-call delivery: the session a call
-- belongs to and whether a failed compensation halted it, why each undo
-- entry settled as it did, and what the post-call workflow delivered.
-- Kept as close to the PostgreSQL schema as SQLite allows.

-- A call or agent session. The stored state is active, halted or ended;
-- awaiting_approval is derived from the session's calls and never stored,
-- so it cannot disagree with the approval requests. facts are the agent
-- runtime's, frozen when the session's first call creates the row: approval
-- conditions read them, so no later call may change them. A halted session
-- names the compensation that failed; one that ends halted keeps the halt,
-- which nobody resolved.
CREATE TABLE sessions (
    id             TEXT NOT NULL PRIMARY KEY,
    agent_id       TEXT NOT NULL CHECK (agent_id <> ''),
    state          TEXT NOT NULL CHECK (state IN ('active', 'halted', 'ended')),
    facts          TEXT NOT NULL DEFAULT '{}' CHECK (json_type(facts) = 'object'),
    halt_step      TEXT CHECK (halt_step <> ''),
    halt_reason    TEXT,
    resolved_by    TEXT CHECK (resolved_by <> ''),
    resolve_reason TEXT,
    transcript     TEXT CHECK (json_valid(transcript)),
    created_at     TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    updated_at     TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    ended_at       TEXT,
    CONSTRAINT sessions_halted_names_step
        CHECK (state <> 'halted' OR halt_step IS NOT NULL),
    CONSTRAINT sessions_active_is_not_halted
        CHECK (state <> 'active' OR (halt_step IS NULL AND halt_reason IS NULL)),
    CONSTRAINT sessions_ended_iff_ended_at
        CHECK ((state = 'ended') = (ended_at IS NOT NULL)),
    CONSTRAINT sessions_transcript_only_when_ended
        CHECK (state = 'ended' OR transcript IS NULL),
    CONSTRAINT sessions_resolution_names_resolver
        CHECK (resolve_reason IS NULL OR resolved_by IS NOT NULL)
);

-- Why an entry settled as it did: the compensation's failure, or what a
-- human found when a retry after their fix succeeded.
ALTER TABLE undo_entries ADD COLUMN detail TEXT;

-- A delivery is claimed only with the provider's proof of it. SQLite cannot
-- add a constraint to a table, so deferred_items is rebuilt with it, the
-- way SQLite documents for any change ALTER TABLE cannot make. rowid is
-- copied because listings break ties within a millisecond by it. Existing
-- rows are checked on the way: a delivered row without a receipt stops the
-- migration, since it claims a delivery nothing proves and needs a human to
-- look. Nothing references the table yet, so dropping it breaks no foreign
-- key; postcall_items, which will, is created after.
CREATE TABLE deferred_items_rebuilt (
    id            TEXT NOT NULL PRIMARY KEY,
    session_id    TEXT NOT NULL,
    operation_key TEXT NOT NULL UNIQUE,
    tool          TEXT NOT NULL,
    args          TEXT NOT NULL CHECK (json_valid(args)),
    status        TEXT NOT NULL CHECK (status IN ('recorded', 'delivered', 'failed')),
    receipt       TEXT CHECK (json_valid(receipt)),
    reason        TEXT,
    created_at    TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    updated_at    TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    CONSTRAINT deferred_items_delivered_has_receipt
        CHECK (status <> 'delivered' OR receipt IS NOT NULL)
);

INSERT INTO deferred_items_rebuilt (rowid, id, session_id, operation_key, tool, args, status, receipt,
                                    reason, created_at, updated_at)
SELECT rowid, id, session_id, operation_key, tool, args, status, receipt, reason, created_at, updated_at
FROM deferred_items;

DROP TABLE deferred_items;

ALTER TABLE deferred_items_rebuilt RENAME TO deferred_items;

CREATE INDEX deferred_items_session_id_created_at_idx ON deferred_items (session_id, created_at);

-- One row per work item the post-call workflow judged from a session, keyed
-- by the item's key, which is stable across re-runs: a re-run finds what
-- was delivered and does not deliver it again. A delivered row never moves
-- back, and its receipt stays the one that proved the delivery.
--
-- session_id has no foreign key: sessions already under way when this
-- migration ran have no row, and their post-call work must still be
-- recorded. invocation_id has none either, like every invocation_id in the
-- ledger. deferred_id names the recorded intent the item delivers, if any.
CREATE TABLE postcall_items (
    session_id    TEXT NOT NULL,
    item_key      TEXT NOT NULL,
    tool          TEXT NOT NULL,
    source        TEXT NOT NULL,
    deferred_id   TEXT REFERENCES deferred_items (id),
    operation_key TEXT NOT NULL,
    invocation_id TEXT,
    status        TEXT NOT NULL
        CHECK (status IN ('pending', 'delivered', 'failed', 'awaiting_approval')),
    receipt       TEXT CHECK (json_valid(receipt)),
    reason        TEXT,
    created_at    TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    updated_at    TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    PRIMARY KEY (session_id, item_key),
    CONSTRAINT postcall_items_delivered_has_receipt
        CHECK (status <> 'delivered' OR receipt IS NOT NULL)
);
