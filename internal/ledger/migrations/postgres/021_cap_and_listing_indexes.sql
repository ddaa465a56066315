-- Indexes for the per-agent caps and the paged listings.
--
-- The caps are counted in the transaction that opens an approval request
-- or a session, under the agent's lock, so the count must read the agent's
-- open rows only. The partial indexes hold just the rows a cap counts, a
-- small and short-lived set, whatever the agent's history. An invocation
-- awaiting approval is then checked against its request, if opened yet, by
-- the request's invocation.
CREATE INDEX invocations_awaiting_approval_agent_id_idx ON invocations (agent_id)
    WHERE state = 'awaiting_approval';

CREATE INDEX sessions_live_agent_id_idx ON sessions (agent_id)
    WHERE state <> 'ended';

CREATE INDEX approval_requests_invocation_id_idx ON approval_requests (invocation_id);

-- A listing pages by its sort key, (created_at, id): a page is read from
-- the index where the last one stopped, forwards for the approval queue
-- (oldest first), backwards for sessions and refusals (newest first), and
-- an age filter bounds the range read.
CREATE INDEX approval_requests_created_at_id_idx ON approval_requests (created_at, id);

CREATE INDEX sessions_created_at_id_idx ON sessions (created_at, id);

CREATE INDEX refusals_created_at_id_idx ON refusals (created_at, id);
