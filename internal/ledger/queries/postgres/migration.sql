-- name: MigrationLock
-- Serializes concurrent Migrate calls on one schema until the transaction
-- ends; other schemas in the same database migrate independently.
SELECT pg_advisory_xact_lock(hashtext('maestro.migrate'), hashtext(coalesce(current_schema(), '')));

-- name: MigrationTableCreate
CREATE TABLE IF NOT EXISTS schema_migrations (
    version    integer     PRIMARY KEY,
    name       text        NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now()
);

-- name: MigrationVersionList
SELECT version FROM schema_migrations ORDER BY version;

-- name: MigrationRecord
INSERT INTO schema_migrations (version, name) VALUES ($1, $2);
