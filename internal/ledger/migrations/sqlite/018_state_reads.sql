-- Before and after state of each write: what the catalog's before read saw
-- just ahead of the effect, and what its after read-back saw once the
-- effect succeeded, each a maestrotype.StateRead. before_state and
-- after_state keep the request sent and the provider's answer.
--
-- before_read is recorded under the claim's lease before the provider is
-- called, so an attempt that takes the key over keeps it rather than read
-- a state the effect may already have changed.
ALTER TABLE effects ADD COLUMN before_read TEXT CHECK (json_valid(before_read));
ALTER TABLE effects ADD COLUMN after_read TEXT CHECK (json_valid(after_read));
