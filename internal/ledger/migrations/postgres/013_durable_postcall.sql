-- Post-call delivery through outages and fallbacks: a deferred intent or
-- post-call item that no channel delivered by its deadline is held for a
-- human, which is neither delivered nor an ordinary failure, and the item
-- keeps every attempt made for it and the work item itself, so ops sees the
-- whole chain and an operator's retry redoes exactly that work.

ALTER TABLE deferred_items DROP CONSTRAINT deferred_items_status_check;
ALTER TABLE deferred_items ADD CONSTRAINT deferred_items_status_check
    CHECK (status IN ('recorded', 'delivered', 'failed', 'held'));

ALTER TABLE postcall_items DROP CONSTRAINT postcall_items_status_check;
ALTER TABLE postcall_items ADD CONSTRAINT postcall_items_status_check
    CHECK (status IN ('pending', 'delivered', 'failed', 'awaiting_approval', 'held'));

ALTER TABLE postcall_items ADD COLUMN attempts jsonb NOT NULL DEFAULT '[]'
    CHECK (jsonb_typeof(attempts) = 'array');
ALTER TABLE postcall_items ADD COLUMN item jsonb;

-- The reconciliation list reads the held items first, oldest first.
CREATE INDEX postcall_items_held_idx ON postcall_items (updated_at) WHERE status = 'held';
