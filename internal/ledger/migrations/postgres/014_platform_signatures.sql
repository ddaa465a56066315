-- Platform signatures already accepted, so that a captured signed request
-- replayed to any API process sharing the ledger is refused, not only one
-- replayed to the process that took it first.
--
-- id is the signature's identity as the verifier computes it (platform and
-- MAC); expires_at is when no process would accept the signature any more.
-- A row past its expiry is dead: a claim takes it again, and claims delete
-- a bounded batch of dead rows as they go, so the table holds about one
-- tolerance window of signed requests.
CREATE TABLE platform_signatures (
    id         text        PRIMARY KEY CHECK (id <> ''),
    expires_at timestamptz NOT NULL
);

CREATE INDEX platform_signatures_expires_idx ON platform_signatures (expires_at);
