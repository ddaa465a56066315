-- Post-call delivery through outages and fallbacks: a deferred intent or
-- post-call item that no channel delivered by its deadline is held for a
-- human, which is neither delivered nor an ordinary failure, and the item
-- keeps every attempt made for it and the work item itself, so ops sees the
-- whole chain and an operator's retry redoes exactly that work.
--
-- SQLite cannot change a CHECK, so both tables are rebuilt as SQLite
-- documents, keeping rowid, which listings break ties by. postcall_items
-- references deferred_items, so it is set aside first and recreated last:
-- no foreign key ever points at a dropped table.
CREATE TABLE postcall_items_saved AS
SELECT rowid AS saved_rowid, * FROM postcall_items;

DROP TABLE postcall_items;

CREATE TABLE deferred_items_rebuilt (
    id            TEXT NOT NULL PRIMARY KEY,
    session_id    TEXT NOT NULL,
    operation_key TEXT NOT NULL UNIQUE,
    tool          TEXT NOT NULL,
    args          TEXT NOT NULL CHECK (json_valid(args)),
    status        TEXT NOT NULL CHECK (status IN ('recorded', 'delivered', 'failed', 'held')),
    receipt       TEXT CHECK (json_valid(receipt)),
    reason        TEXT,
    created_at    TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    updated_at    TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    CONSTRAINT deferred_items_delivered_has_receipt
        CHECK (status <> 'delivered' OR receipt IS NOT NULL)
);

INSERT INTO deferred_items_rebuilt (rowid, id, session_id, operation_key, tool, args, status, receipt,
                                    reason, created_at, updated_at)
SELECT rowid, id, session_id, operation_key, tool, args, status, receipt, reason, created_at, updated_at
FROM deferred_items;

DROP TABLE deferred_items;

ALTER TABLE deferred_items_rebuilt RENAME TO deferred_items;

CREATE INDEX deferred_items_session_id_created_at_idx ON deferred_items (session_id, created_at);

CREATE TABLE postcall_items (
    session_id    TEXT NOT NULL,
    item_key      TEXT NOT NULL,
    tool          TEXT NOT NULL,
    source        TEXT NOT NULL,
    deferred_id   TEXT REFERENCES deferred_items (id),
    operation_key TEXT NOT NULL,
    invocation_id TEXT,
    status        TEXT NOT NULL
        CHECK (status IN ('pending', 'delivered', 'failed', 'awaiting_approval', 'held')),
    receipt       TEXT CHECK (json_valid(receipt)),
    reason        TEXT,
    created_at    TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    updated_at    TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    attempts      TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(attempts) AND json_type(attempts) = 'array'),
    item          TEXT CHECK (json_valid(item)),
    PRIMARY KEY (session_id, item_key),
    CONSTRAINT postcall_items_delivered_has_receipt
        CHECK (status <> 'delivered' OR receipt IS NOT NULL)
);

INSERT INTO postcall_items (rowid, session_id, item_key, tool, source, deferred_id, operation_key,
                            invocation_id, status, receipt, reason, created_at, updated_at)
SELECT saved_rowid, session_id, item_key, tool, source, deferred_id, operation_key,
       invocation_id, status, receipt, reason, created_at, updated_at
FROM postcall_items_saved;

DROP TABLE postcall_items_saved;

CREATE INDEX postcall_items_held_idx ON postcall_items (updated_at) WHERE status = 'held';
