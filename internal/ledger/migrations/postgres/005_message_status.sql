-- Message status: where a message a provider accepted has got to.
--
-- A send's receipt proves only that the provider accepted the message;
-- delivery is reported later, by status callbacks that may arrive before the
-- ledger has settled the send, more than once, and out of order. So statuses
-- are kept by the provider's message ID, apart from effects, and joined to
-- the effect whose receipt names that ID when read.
CREATE TABLE message_statuses (
    provider   text        NOT NULL CHECK (provider <> ''),
    message_id text        NOT NULL CHECK (message_id <> ''),
    status     text        NOT NULL
        CHECK (status IN ('accepted', 'scheduled', 'queued', 'sending', 'sent',
                          'delivered', 'undelivered', 'failed', 'canceled', 'read')),
    recipient  text        CHECK (recipient <> ''),
    error_code text        CHECK (error_code <> ''),
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (provider, message_id)
);

-- Ops lists the messages that ended without reaching the handset.
CREATE INDEX message_statuses_failed_idx ON message_statuses (updated_at)
    WHERE status IN ('undelivered', 'failed', 'canceled');

-- Every callback accepted, once: the same status for the same message, or
-- the same provider idempotency token, again is a replay and changes
-- nothing. Append-only, like the other logs.
CREATE TABLE message_status_callbacks (
    id                bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    provider          text        NOT NULL,
    message_id        text        NOT NULL,
    status            text        NOT NULL,
    error_code        text,
    idempotency_token text        CHECK (idempotency_token <> ''),
    received_at       timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT message_status_callbacks_once UNIQUE (provider, message_id, status)
);

CREATE UNIQUE INDEX message_status_callbacks_token_idx
    ON message_status_callbacks (provider, idempotency_token) WHERE idempotency_token IS NOT NULL;

CREATE FUNCTION message_status_callbacks_refuse_change() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'message_status_callbacks is append-only: % refused', TG_OP
        USING ERRCODE = 'insufficient_privilege';
END;
$$;

CREATE TRIGGER message_status_callbacks_append_only
    BEFORE UPDATE OR DELETE OR TRUNCATE ON message_status_callbacks
    FOR EACH STATEMENT EXECUTE FUNCTION message_status_callbacks_refuse_change();

-- Statuses are joined to effects by the Twilio message SID their receipt
-- carries (a page's receipt carries one next to its email's ID).
CREATE INDEX effects_receipt_message_sid_idx ON effects ((receipt -> 'fields' ->> 'message_sid'))
    WHERE receipt IS NOT NULL;
