-- A signal Temporal refuses as invalid is held for a human instead of
-- retried for ever. Kept as close to the PostgreSQL schema as SQLite
-- allows; see there for the reasons.
ALTER TABLE signal_outbox ADD COLUMN held_at TEXT;

CREATE INDEX signal_outbox_held_idx ON signal_outbox (held_at)
    WHERE held_at IS NOT NULL AND delivered_at IS NULL AND abandoned_at IS NULL;
