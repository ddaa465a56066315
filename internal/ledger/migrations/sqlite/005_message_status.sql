-- Message status: where a message a provider accepted has got to. Kept as
-- close to the PostgreSQL schema as SQLite allows; see there for why
-- statuses are kept by message ID apart from effects.
CREATE TABLE message_statuses (
    provider   TEXT NOT NULL CHECK (provider <> ''),
    message_id TEXT NOT NULL CHECK (message_id <> ''),
    status     TEXT NOT NULL
        CHECK (status IN ('accepted', 'scheduled', 'queued', 'sending', 'sent',
                          'delivered', 'undelivered', 'failed', 'canceled', 'read')),
    recipient  TEXT CHECK (recipient <> ''),
    error_code TEXT CHECK (error_code <> ''),
    created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    updated_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    PRIMARY KEY (provider, message_id)
);

CREATE INDEX message_statuses_failed_idx ON message_statuses (updated_at)
    WHERE status IN ('undelivered', 'failed', 'canceled');

CREATE TABLE message_status_callbacks (
    id                INTEGER PRIMARY KEY AUTOINCREMENT,
    provider          TEXT NOT NULL,
    message_id        TEXT NOT NULL,
    status            TEXT NOT NULL,
    error_code        TEXT,
    idempotency_token TEXT CHECK (idempotency_token <> ''),
    received_at       TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    CONSTRAINT message_status_callbacks_once UNIQUE (provider, message_id, status)
);

CREATE UNIQUE INDEX message_status_callbacks_token_idx
    ON message_status_callbacks (provider, idempotency_token) WHERE idempotency_token IS NOT NULL;

CREATE TRIGGER message_status_callbacks_no_update
    BEFORE UPDATE ON message_status_callbacks
BEGIN
    SELECT RAISE(ABORT, 'message_status_callbacks is append-only: UPDATE refused');
END;

CREATE TRIGGER message_status_callbacks_no_delete
    BEFORE DELETE ON message_status_callbacks
BEGIN
    SELECT RAISE(ABORT, 'message_status_callbacks is append-only: DELETE refused');
END;

CREATE INDEX effects_receipt_message_sid_idx ON effects (json_extract(receipt, '$.fields.message_sid'))
    WHERE receipt IS NOT NULL;
