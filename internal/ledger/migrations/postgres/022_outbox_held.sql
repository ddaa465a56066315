-- A signal Temporal refuses as invalid (a payload over its size limit, an
-- argument it cannot decode) fails the same way on every attempt. It is
-- held for a human instead of retried for ever: held_at says since when,
-- last_error why, and the reconciliation queue lists it.
ALTER TABLE signal_outbox ADD COLUMN held_at timestamptz;

CREATE INDEX signal_outbox_held_idx ON signal_outbox (held_at)
    WHERE held_at IS NOT NULL AND delivered_at IS NULL AND abandoned_at IS NULL;
