-- Indexes for the per-agent caps and the paged listings. Kept as close to
-- the PostgreSQL schema as SQLite allows; see there for the reasons.
CREATE INDEX invocations_awaiting_approval_agent_id_idx ON invocations (agent_id)
    WHERE state = 'awaiting_approval';

CREATE INDEX sessions_live_agent_id_idx ON sessions (agent_id)
    WHERE state <> 'ended';

CREATE INDEX approval_requests_invocation_id_idx ON approval_requests (invocation_id);

CREATE INDEX approval_requests_created_at_id_idx ON approval_requests (created_at, id);

CREATE INDEX sessions_created_at_id_idx ON sessions (created_at, id);

CREATE INDEX refusals_created_at_id_idx ON refusals (created_at, id);
