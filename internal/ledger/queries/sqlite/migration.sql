-- name: MigrationLock
-- Nothing to take: the store begins every transaction IMMEDIATE, so the
-- transaction already holds the database's write lock.
SELECT 1;

-- name: MigrationTableCreate
CREATE TABLE IF NOT EXISTS schema_migrations (
    version    INTEGER NOT NULL PRIMARY KEY,
    name       TEXT    NOT NULL,
    applied_at TEXT    NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);

-- name: MigrationVersionList
SELECT version FROM schema_migrations ORDER BY version;

-- name: MigrationRecord
INSERT INTO schema_migrations (version, name) VALUES ($1, $2);
