-- One provider record proves one effect.
--
-- Reconciliation adopts a provider's record (a Twilio message found by a
-- search) as the receipt of an effect whose answer was lost. Checking first
-- that no other operation key holds it leaves a window in which two
-- reconcilers adopt the same record; this index closes it inside the
-- settling transaction itself: the second settle fails, and its key is held
-- for a human.
--
-- HTTP services are left out: their receipt ID names the resource acted on
-- (a work order created, then cancelled by another key, carries the same
-- ID in both receipts), and an HTTP effect is never settled by adopting a
-- record, only by replaying its own Idempotency-Key.
CREATE UNIQUE INDEX effects_receipt_provider_id_key
    ON effects ((receipt ->> 'provider'), (receipt ->> 'id'))
    WHERE receipt IS NOT NULL AND receipt ->> 'provider' NOT LIKE 'http:%';
