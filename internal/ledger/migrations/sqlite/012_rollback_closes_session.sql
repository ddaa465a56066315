-- A rollback closes its session to new effects before it waits for the
-- calls still in flight. Kept as close to the PostgreSQL schema as SQLite
-- allows; see there for the reasons.
ALTER TABLE sessions ADD COLUMN rollback_started_at TEXT;
ALTER TABLE sessions ADD COLUMN resolution TEXT
    CHECK (resolution IN ('by_hand', 'retry'));
