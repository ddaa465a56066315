-- The ledger: the catalog mirror, refusals, invocations, the idempotency
-- ledger of effects, undo stacks, deferred work and approval requests.
--
-- Frozen arguments are json, not jsonb: jsonb rewrites the text (key order,
-- whitespace, duplicate keys) and the stored bytes must still hash to the
-- recorded sha256. Values that are only ever read back as values are jsonb.
--
-- Optional text is NULL, never '', so "IS NOT NULL" constraints mean what
-- they say.

CREATE TABLE tool_registry (
    name              text        PRIMARY KEY,
    effect            text        NOT NULL CHECK (effect IN ('read', 'write', 'money')),
    delivery          text        NOT NULL CHECK (delivery IN ('readonly', 'real-sync', 'record-deferred')),
    reversibility     text        NOT NULL CHECK (reversibility IN ('none', 'compensable', 'irreversible')),
    compensation_tool text        CHECK (compensation_tool <> ''),
    approver_role     text        CHECK (approver_role <> ''),
    connector_kind    text        NOT NULL,
    owner             text        NOT NULL,
    catalog_hash      text        NOT NULL,
    synced_at         timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT tool_registry_compensable_names_compensation
        CHECK (reversibility <> 'compensable' OR compensation_tool IS NOT NULL),
    CONSTRAINT tool_registry_money_names_approver
        CHECK (effect <> 'money' OR approver_role IS NOT NULL),
    CONSTRAINT tool_registry_read_is_readonly
        CHECK (effect <> 'read' OR delivery = 'readonly')
);

CREATE TABLE refusals (
    id            bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    agent_id      text,
    session_id    text,
    tool          text,
    operation_key text,
    code          text        NOT NULL,
    detail        text,
    created_at    timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE invocations (
    id            text        PRIMARY KEY,
    operation_key text        NOT NULL UNIQUE,
    session_id    text,
    agent_id      text,
    tool          text        NOT NULL,
    args          json        NOT NULL,
    args_hash     text        NOT NULL,
    route         text        NOT NULL
        CHECK (route IN ('read', 'write', 'compensable', 'gated', 'deferred')),
    state         text        NOT NULL
        CHECK (state IN ('running', 'awaiting_approval', 'succeeded', 'failed', 'recorded',
                         'rejected', 'timed_out', 'needs_reconciliation')),
    observation   jsonb,
    workflow_id   text,
    created_at    timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX invocations_session_id_created_at_idx ON invocations (session_id, created_at);

-- One row per operation key: the arbiter of exactly-once. A row in
-- in_progress is leased to lease_owner until lease_expires_at.
CREATE TABLE effects (
    operation_key    text        PRIMARY KEY,
    invocation_id    text,
    tool             text        NOT NULL,
    payload_hash     text        NOT NULL,
    status           text        NOT NULL
        CHECK (status IN ('in_progress', 'succeeded', 'failed', 'needs_reconciliation')),
    lease_owner      text        NOT NULL,
    lease_expires_at timestamptz NOT NULL,
    attempts         integer     NOT NULL DEFAULT 1 CHECK (attempts > 0),
    before_state     jsonb,
    after_state      jsonb,
    receipt          jsonb,
    result           jsonb,
    error            text,
    created_at       timestamptz NOT NULL DEFAULT now(),
    updated_at       timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX effects_status_created_at_idx ON effects (status, created_at);

-- The reference to effects holds by construction (an entry is only written
-- in the transaction that claims its effect); the foreign key keeps it so.
CREATE TABLE undo_entries (
    id                   text        PRIMARY KEY,
    seq                  bigint      GENERATED ALWAYS AS IDENTITY UNIQUE,
    session_id           text        NOT NULL,
    operation_key        text        NOT NULL UNIQUE REFERENCES effects (operation_key),
    compensation_tool    text        NOT NULL,
    compensation_version text,
    args_snapshot        json,
    status               text        NOT NULL
        CHECK (status IN ('pending', 'compensated', 'failed', 'skipped')),
    created_at           timestamptz NOT NULL DEFAULT now(),
    updated_at           timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX undo_entries_session_id_seq_idx ON undo_entries (session_id, seq);

CREATE TABLE deferred_items (
    id            text        PRIMARY KEY,
    session_id    text        NOT NULL,
    operation_key text        NOT NULL UNIQUE,
    tool          text        NOT NULL,
    args          json        NOT NULL,
    status        text        NOT NULL CHECK (status IN ('recorded', 'delivered', 'failed')),
    receipt       jsonb,
    reason        text,
    created_at    timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX deferred_items_session_id_created_at_idx ON deferred_items (session_id, created_at);

CREATE TABLE approval_requests (
    id            text        PRIMARY KEY,
    invocation_id text        NOT NULL,
    operation_key text        NOT NULL UNIQUE,
    session_id    text,
    agent_id      text,
    tool          text        NOT NULL,
    args          json        NOT NULL,
    args_hash     text        NOT NULL,
    approver_role text,       -- empty when only a rule may approve
    reason        text,
    risk_tags     jsonb       NOT NULL DEFAULT '[]' CHECK (jsonb_typeof(risk_tags) = 'array'),
    context       jsonb,
    status        text        NOT NULL
        CHECK (status IN ('pending', 'approved', 'rejected', 'timed_out', 'auto_approved')),
    timeout_at    timestamptz NOT NULL,
    decided_by    text,
    decided_at    timestamptz,
    created_at    timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT approval_requests_decided_iff_final
        CHECK ((status = 'pending') = (decided_at IS NULL))
);

CREATE INDEX approval_requests_status_created_at_idx ON approval_requests (status, created_at);
