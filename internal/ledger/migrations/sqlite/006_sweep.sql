-- The sweeper finishes invocations whose workflow ended without finishing
-- them (terminated, timed out). It scans the invocations that are not yet
-- final, a small and short-lived set, so the index holds only those.
CREATE INDEX invocations_open_updated_at_idx ON invocations (updated_at)
    WHERE state IN ('running', 'awaiting_approval');
