-- Platform signatures already accepted. Kept as close to the PostgreSQL
-- schema as SQLite allows; see there for the reasons.
CREATE TABLE platform_signatures (
    id         TEXT PRIMARY KEY CHECK (id <> ''),
    expires_at TEXT NOT NULL
);

CREATE INDEX platform_signatures_expires_idx ON platform_signatures (expires_at);
