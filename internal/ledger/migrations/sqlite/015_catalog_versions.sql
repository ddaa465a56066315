-- Catalog versions: a catalog reloads without a restart, and every process
-- of one ledger converges on the same one.
--
-- catalog_versions keeps each catalog file the service has run, whole and
-- under its sha256, so any process can load the version an invocation was
-- admitted under and run it, approve it and compensate it by that version
-- whatever the current one says. catalog_activations records each time a
-- version became current, in order: the last row is the version every
-- process converges on. Both are append-only.
CREATE TABLE catalog_versions (
    version           TEXT PRIMARY KEY CHECK (version <> ''),
    source            BLOB NOT NULL,
    first_recorded_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);

CREATE TABLE catalog_activations (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    version      TEXT NOT NULL REFERENCES catalog_versions (version),
    activated_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);

CREATE TRIGGER catalog_versions_no_update
    BEFORE UPDATE ON catalog_versions
BEGIN
    SELECT RAISE(ABORT, 'catalog_versions is append-only: UPDATE refused');
END;

CREATE TRIGGER catalog_versions_no_delete
    BEFORE DELETE ON catalog_versions
BEGIN
    SELECT RAISE(ABORT, 'catalog_versions is append-only: DELETE refused');
END;

CREATE TRIGGER catalog_activations_no_update
    BEFORE UPDATE ON catalog_activations
BEGIN
    SELECT RAISE(ABORT, 'catalog_activations is append-only: UPDATE refused');
END;

CREATE TRIGGER catalog_activations_no_delete
    BEFORE DELETE ON catalog_activations
BEGIN
    SELECT RAISE(ABORT, 'catalog_activations is append-only: DELETE refused');
END;
