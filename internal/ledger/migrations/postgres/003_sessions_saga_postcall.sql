-- Sessions, the saga's outcomes and post-call delivery: the session a call
-- belongs to and whether a failed compensation halted it, why each undo
-- entry settled as it did, and what the post-call workflow delivered.

-- A call or agent session. The stored state is active, halted or ended;
-- awaiting_approval is derived from the session's calls and never stored,
-- so it cannot disagree with the approval requests. facts are the agent
-- runtime's, frozen when the session's first call creates the row: approval
-- conditions read them, so no later call may change them. A halted session
-- names the compensation that failed; one that ends halted keeps the halt,
-- which nobody resolved.
CREATE TABLE sessions (
    id             text        PRIMARY KEY,
    agent_id       text        NOT NULL CHECK (agent_id <> ''),
    state          text        NOT NULL CHECK (state IN ('active', 'halted', 'ended')),
    facts          jsonb       NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(facts) = 'object'),
    halt_step      text        CHECK (halt_step <> ''),
    halt_reason    text,
    resolved_by    text        CHECK (resolved_by <> ''),
    resolve_reason text,
    transcript     jsonb,
    created_at     timestamptz NOT NULL DEFAULT now(),
    updated_at     timestamptz NOT NULL DEFAULT now(),
    ended_at       timestamptz,
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
ALTER TABLE undo_entries ADD COLUMN detail text;

-- A delivery is claimed only with the provider's proof of it. Existing rows
-- are checked too: a delivered row without a receipt stops the migration,
-- since it claims a delivery nothing proves and needs a human to look.
ALTER TABLE deferred_items ADD CONSTRAINT deferred_items_delivered_has_receipt
    CHECK (status <> 'delivered' OR receipt IS NOT NULL);

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
    session_id    text        NOT NULL,
    item_key      text        NOT NULL,
    tool          text        NOT NULL,
    source        text        NOT NULL,
    deferred_id   text        REFERENCES deferred_items (id),
    operation_key text        NOT NULL,
    invocation_id text,
    status        text        NOT NULL
        CHECK (status IN ('pending', 'delivered', 'failed', 'awaiting_approval')),
    receipt       jsonb,
    reason        text,
    created_at    timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (session_id, item_key),
    CONSTRAINT postcall_items_delivered_has_receipt
        CHECK (status <> 'delivered' OR receipt IS NOT NULL)
);
