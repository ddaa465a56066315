-- Approvers are told: each notification of an approval request (the text,
-- email or webhook post that tells an operator a request is waiting), each
-- one that could not be sent, and each escalation of a request still
-- undecided joins the request's append-only log. A notification changes
-- nothing about the request, so args_hash_after stays NULL for them.
ALTER TABLE approval_events DROP CONSTRAINT approval_events_kind_check;

ALTER TABLE approval_events ADD CONSTRAINT approval_events_kind_check
    CHECK (kind IN ('requested', 'approved', 'rejected', 'modified', 'timed_out', 'auto_approved',
                    'token_minted', 'token_used', 'token_refused', 'decision_refused',
                    'notified', 'notify_failed', 'escalated'));
