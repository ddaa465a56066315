-- Admission asks, before every write, whether the call's session waits
-- for a human's decision. Only pending requests can make it wait, and
-- there are few, so the index holds just those.
CREATE INDEX approval_requests_pending_session_id_idx ON approval_requests (session_id)
    WHERE status = 'pending';
