-- Agent callbacks: an invocation answered "pending" owes its agent one
-- signed delivery of the final observation, at the agent's callback URL.
--
-- The row is written when the API answers 202, keyed by the invocation, so
-- a second pending answer for the same call owes nothing more. A relay
-- delivers it once the invocation is final, retrying with backoff; claiming
-- a row pushes next_attempt_at past the attempt's timeout, so two relays
-- (or two sweeps of one) never post the same callback at once.
CREATE TABLE callback_deliveries (
    invocation_id   text        PRIMARY KEY REFERENCES invocations (id),
    agent_id        text        NOT NULL CHECK (agent_id <> ''),
    url             text        NOT NULL CHECK (url <> ''),
    status          text        NOT NULL DEFAULT 'pending'
        CHECK (status IN ('pending', 'delivered', 'failed')),
    attempts        integer     NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    last_error      text,
    next_attempt_at timestamptz NOT NULL DEFAULT now(),
    created_at      timestamptz NOT NULL DEFAULT now(),
    delivered_at    timestamptz,
    CONSTRAINT callback_deliveries_delivered_at
        CHECK ((status = 'delivered') = (delivered_at IS NOT NULL))
);

CREATE INDEX callback_deliveries_due_idx ON callback_deliveries (next_attempt_at) WHERE status = 'pending';
