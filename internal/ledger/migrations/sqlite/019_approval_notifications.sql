-- Approvers are told: each notification of an approval request (the text,
-- email or webhook post that tells an operator a request is waiting), each
-- one that could not be sent, and each escalation of a request still
-- undecided joins the request's append-only log. SQLite cannot change a
-- CHECK in place, so the log is rebuilt with its rows, ids and triggers.
-- DROP TABLE fires no DELETE trigger, but the triggers go first anyway so
-- the rebuild never depends on that.
DROP TRIGGER approval_events_no_update;
DROP TRIGGER approval_events_no_delete;

CREATE TABLE approval_events_rebuilt (
    id               INTEGER PRIMARY KEY AUTOINCREMENT,
    approval_id      TEXT NOT NULL REFERENCES approval_requests (id),
    kind             TEXT NOT NULL
        CHECK (kind IN ('requested', 'approved', 'rejected', 'modified', 'timed_out', 'auto_approved',
                        'token_minted', 'token_used', 'token_refused', 'decision_refused',
                        'notified', 'notify_failed', 'escalated')),
    actor            TEXT NOT NULL CHECK (actor <> ''),
    args_hash_before TEXT NOT NULL,
    args_hash_after  TEXT,
    detail           TEXT CHECK (json_valid(detail)),
    created_at       TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    CONSTRAINT approval_events_only_modify_changes_args
        CHECK ((kind = 'modified') = (args_hash_after IS NOT NULL))
);

INSERT INTO approval_events_rebuilt (id, approval_id, kind, actor, args_hash_before, args_hash_after, detail, created_at)
SELECT id, approval_id, kind, actor, args_hash_before, args_hash_after, detail, created_at
FROM approval_events;

DROP TABLE approval_events;

ALTER TABLE approval_events_rebuilt RENAME TO approval_events;

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
