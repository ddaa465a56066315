-- Trust boundaries: who vouches for each session fact, and signals that
-- must reach their workflow even when the first attempt is lost.
--
-- fact_provenance maps each fact's name to its provenance
-- (agent-declared, operator, platform-signed:<platform>). Sessions from
-- before it hold only what agents stated, which the empty default says:
-- a fact with no entry is agent-declared.
ALTER TABLE sessions
    ADD COLUMN fact_provenance jsonb NOT NULL DEFAULT '{}'
        CHECK (jsonb_typeof(fact_provenance) = 'object');

-- signal_outbox holds a signal a committed decision owes its workflow (an
-- approval's wake-up, a call's end), written in the same transaction as the
-- decision. A delivery loop retries it with backoff until Temporal accepts
-- it, so a signal lost on the way cannot strand the decision in the ledger.
CREATE TABLE signal_outbox (
    id              bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    workflow_id     text        NOT NULL CHECK (workflow_id <> ''),
    signal_name     text        NOT NULL CHECK (signal_name <> ''),
    payload         jsonb       NOT NULL,
    -- Set for an approval's wake-up: a late delivery renews its token.
    approval_id     text,
    attempts        integer     NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    last_error      text,
    next_attempt_at timestamptz NOT NULL DEFAULT now(),
    created_at      timestamptz NOT NULL DEFAULT now(),
    delivered_at    timestamptz,
    -- Set when the workflow is gone, so no attempt can ever deliver it.
    abandoned_at    timestamptz,
    CONSTRAINT signal_outbox_delivered_or_abandoned
        CHECK (delivered_at IS NULL OR abandoned_at IS NULL)
);

CREATE INDEX signal_outbox_due_idx ON signal_outbox (next_attempt_at) WHERE delivered_at IS NULL AND abandoned_at IS NULL;
