-- name: InvocationInsert
INSERT INTO invocations (id, operation_key, session_id, agent_id, tool, args, args_hash, route, state,
                         workflow_id, tool_call_id, effect_class, catalog_version)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
ON CONFLICT (operation_key) DO NOTHING
RETURNING id, operation_key, session_id, agent_id, tool, args, args_hash, route, state, observation,
          workflow_id, created_at, updated_at, tool_call_id, effect_class, catalog_version;

-- name: InvocationInsertInSession
-- InvocationInsert for a call whose session admission need not read: the
-- insert itself holds the session to what admission checks of it (its
-- agent's, active, not being rolled back, waiting for no approver: any
-- pending request sends the call to the full admission, which tells a
-- request that holds the session from one that does not). Nothing
-- inserted means the key was taken or the session does not pass, and the
-- caller reads both.
INSERT INTO invocations (id, operation_key, session_id, agent_id, tool, args, args_hash, route, state,
                         workflow_id, tool_call_id, effect_class, catalog_version)
SELECT $1::text, $2::text, s.id, s.agent_id, $5::text, $6::json, $7::text, $8::text, $9::text, $10::text, $11::text, $12::text, $13::text
FROM sessions s
WHERE s.id = $3::text AND s.agent_id = $4::text AND s.state = 'active' AND s.rollback_started_at IS NULL
  AND NOT EXISTS (SELECT 1 FROM approval_requests r WHERE r.session_id = s.id AND r.status = 'pending')
ON CONFLICT (operation_key) DO NOTHING
RETURNING id, operation_key, session_id, agent_id, tool, args, args_hash, route, state, observation,
          workflow_id, created_at, updated_at, tool_call_id, effect_class, catalog_version;

-- name: InvocationInsertUnderCap
-- InvocationInsert that inserts nothing while the agent holds $14 or more
-- approval requests open, counted as ApprovalCountOpen counts them. The
-- transaction took the agent's cap lock (AgentCapLock) in an earlier
-- statement, so the count sees every commit of the writers before it.
-- Nothing inserted means the key was taken or the cap reached.
INSERT INTO invocations (id, operation_key, session_id, agent_id, tool, args, args_hash, route, state,
                         workflow_id, tool_call_id, effect_class, catalog_version)
SELECT $1::text, $2::text, $3::text, $4::text, $5::text, $6::json, $7::text, $8::text, $9::text, $10::text, $11::text, $12::text, $13::text
WHERE (SELECT count(*)
       FROM invocations i
       WHERE i.agent_id = $4::text AND i.state = 'awaiting_approval'
         AND NOT EXISTS (SELECT 1 FROM approval_requests a WHERE a.invocation_id = i.id AND a.status <> 'pending'))
      < $14::bigint
ON CONFLICT (operation_key) DO NOTHING
RETURNING id, operation_key, session_id, agent_id, tool, args, args_hash, route, state, observation,
          workflow_id, created_at, updated_at, tool_call_id, effect_class, catalog_version;

-- name: InvocationGet
SELECT id, operation_key, session_id, agent_id, tool, args, args_hash, route, state, observation,
       workflow_id, created_at, updated_at, tool_call_id, effect_class,
       catalog_version
FROM invocations
WHERE id = $1;

-- name: InvocationGetWithMessage
-- An invocation with the latest status $2 reported for the message its
-- receipt names, NULLs when there is none: an answer reads both at once.
SELECT i.id, i.operation_key, i.session_id, i.agent_id, i.tool, i.args, i.args_hash, i.route, i.state, i.observation,
       i.workflow_id, i.created_at, i.updated_at, i.tool_call_id, i.effect_class,
       i.catalog_version,
       m.provider, m.message_id, m.status, m.recipient, m.error_code, m.created_at, m.updated_at
FROM invocations i
LEFT JOIN message_statuses m
  ON m.provider = $2 AND m.message_id = i.observation->'receipt'->'fields'->>'message_sid'
WHERE i.id = $1;

-- name: InvocationGetWithApproval
-- An invocation with the ID of the approval request under its operation
-- key, NULL when there is none: a gated call's answer names its request.
SELECT i.id, i.operation_key, i.session_id, i.agent_id, i.tool, i.args, i.args_hash, i.route, i.state, i.observation,
       i.workflow_id, i.created_at, i.updated_at, i.tool_call_id, i.effect_class,
       i.catalog_version,
       a.id
FROM invocations i
LEFT JOIN approval_requests a ON a.operation_key = i.operation_key
WHERE i.id = $1;

-- name: InvocationGetByKey
SELECT id, operation_key, session_id, agent_id, tool, args, args_hash, route, state, observation,
       workflow_id, created_at, updated_at, tool_call_id, effect_class,
       catalog_version
FROM invocations
WHERE operation_key = $1;

-- name: InvocationFinish
-- Returns the row as finished, so the answer needs no read of it.
UPDATE invocations
SET state = $2, observation = $3, updated_at = now()
WHERE id = $1
RETURNING id, operation_key, session_id, agent_id, tool, args, args_hash, route, state, observation,
          workflow_id, created_at, updated_at, tool_call_id, effect_class, catalog_version;

-- name: InvocationAnswerPart
-- Records what an invocation answers while parts of its effect are still
-- to go out; it is running (a gated call's approval is behind it) until
-- they have.
UPDATE invocations
SET state = 'running', observation = $2, updated_at = now()
WHERE id = $1 AND state IN ('running', 'awaiting_approval');

-- name: InvocationSetState
UPDATE invocations
SET state = $2, updated_at = now()
WHERE id = $1;

-- name: InvocationListBySession
SELECT id, operation_key, session_id, agent_id, tool, args, args_hash, route, state, observation,
       workflow_id, created_at, updated_at, tool_call_id, effect_class,
       catalog_version
FROM invocations
WHERE session_id = $1
ORDER BY created_at, id;

-- name: InvocationFinishOpen
-- Finishes an invocation only if nothing has finished it yet: a late
-- finisher must not overwrite the outcome already answered to the agent.
UPDATE invocations
SET state = $2, observation = $3, updated_at = now()
WHERE id = $1 AND state IN ('running', 'awaiting_approval');

-- name: InvocationListOpen
-- Invocations not yet final whose row has not changed for $1 milliseconds.
SELECT id, operation_key, session_id, agent_id, tool, args, args_hash, route, state, observation,
       workflow_id, created_at, updated_at, tool_call_id, effect_class,
       catalog_version
FROM invocations
WHERE state IN ('running', 'awaiting_approval')
  AND updated_at <= now() - $1::bigint * interval '1 millisecond'
ORDER BY updated_at, id
LIMIT $2;
