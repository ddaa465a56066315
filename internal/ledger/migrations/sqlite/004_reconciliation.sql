-- Reconciliation: how each effect whose outcome was unknown got settled.
-- Kept as close to the PostgreSQL schema as SQLite allows; see there for
-- why the log is append-only and has no foreign key to effects.
CREATE TABLE reconciliation_events (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    operation_key TEXT NOT NULL,
    kind          TEXT NOT NULL
        CHECK (kind IN ('adopted', 'absent', 'replayed', 'escalated', 'delivered', 'not_delivered')),
    actor         TEXT NOT NULL CHECK (actor <> ''),
    reason        TEXT NOT NULL CHECK (reason <> ''),
    receipt       TEXT CHECK (json_valid(receipt)),
    created_at    TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    CONSTRAINT reconciliation_events_settling_success_has_receipt
        CHECK (kind NOT IN ('adopted', 'delivered') OR receipt IS NOT NULL)
);

CREATE INDEX reconciliation_events_operation_key_id_idx ON reconciliation_events (operation_key, id);

CREATE TRIGGER reconciliation_events_no_update
    BEFORE UPDATE ON reconciliation_events
BEGIN
    SELECT RAISE(ABORT, 'reconciliation_events is append-only: UPDATE refused');
END;

CREATE TRIGGER reconciliation_events_no_delete
    BEFORE DELETE ON reconciliation_events
BEGIN
    SELECT RAISE(ABORT, 'reconciliation_events is append-only: DELETE refused');
END;

CREATE INDEX effects_receipt_id_idx ON effects (json_extract(receipt, '$.id')) WHERE receipt IS NOT NULL;
