-- The approval gate: an append-only log of everything that happened to an
-- approval request, and the single-use tokens that let an approved call run
-- once with exactly the arguments a human (or a logged policy) approved.
-- Kept as close to the PostgreSQL schema as SQLite allows.

-- Every request, decision, timeout and token use, in order. Rows are only
-- ever inserted: the triggers below refuse UPDATE and DELETE (SQLite has no
-- TRUNCATE; its DELETE without WHERE fires the trigger too), so the audit
-- trail cannot be rewritten. args_hash_before is the request's arguments
-- hash when the event happened; args_hash_after is set only by 'modified'.
CREATE TABLE approval_events (
    id               INTEGER PRIMARY KEY AUTOINCREMENT,
    approval_id      TEXT NOT NULL REFERENCES approval_requests (id),
    kind             TEXT NOT NULL
        CHECK (kind IN ('requested', 'approved', 'rejected', 'modified', 'timed_out', 'auto_approved',
                        'token_minted', 'token_used', 'token_refused', 'decision_refused')),
    actor            TEXT NOT NULL CHECK (actor <> ''),
    args_hash_before TEXT NOT NULL,
    args_hash_after  TEXT,
    detail           TEXT CHECK (json_valid(detail)),
    created_at       TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    CONSTRAINT approval_events_only_modify_changes_args
        CHECK ((kind = 'modified') = (args_hash_after IS NOT NULL))
);

CREATE INDEX approval_events_approval_id_id_idx ON approval_events (approval_id, id);

CREATE TRIGGER approval_events_no_update
    BEFORE UPDATE ON approval_events
BEGIN
    SELECT RAISE(ABORT, 'approval_events is append-only: UPDATE refused');
END;

CREATE TRIGGER approval_events_no_delete
    BEFORE DELETE ON approval_events
BEGIN
    SELECT RAISE(ABORT, 'approval_events is append-only: DELETE refused');
END;

-- A token authorises one execution of an approved request with the
-- arguments that hash to args_hash. Spending sets used_at; an unused token
-- that a fresh one supersedes is deleted (the log keeps its minting).
CREATE TABLE approval_tokens (
    id          TEXT NOT NULL PRIMARY KEY,
    approval_id TEXT NOT NULL REFERENCES approval_requests (id),
    args_hash   TEXT NOT NULL,
    expires_at  TEXT NOT NULL,
    used_at     TEXT,
    used_by     TEXT CHECK (used_by <> ''),
    created_at  TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    CONSTRAINT approval_tokens_used_by_iff_used
        CHECK ((used_at IS NULL) = (used_by IS NULL))
);

CREATE INDEX approval_tokens_approval_id_created_at_idx ON approval_tokens (approval_id, created_at);

-- At most one token per request can still be spent.
CREATE UNIQUE INDEX approval_tokens_one_unused_idx ON approval_tokens (approval_id) WHERE used_at IS NULL;
