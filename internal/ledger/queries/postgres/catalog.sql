-- name: CatalogVersionInsert
-- A version recorded before (a restart on the same file) stays as first
-- recorded.
INSERT INTO catalog_versions (version, source)
VALUES ($1, $2)
ON CONFLICT (version) DO NOTHING;

-- name: CatalogVersionSource
SELECT source FROM catalog_versions WHERE version = $1;

-- name: CatalogActivationInsert
-- Appends an activation unless the version is current already, so
-- processes restarting on the current file add nothing.
INSERT INTO catalog_activations (version)
SELECT $1::text
WHERE $1::text IS DISTINCT FROM (SELECT version FROM catalog_activations ORDER BY id DESC LIMIT 1);

-- name: CatalogActivationCurrent
SELECT version FROM catalog_activations ORDER BY id DESC LIMIT 1;


-- name: CatalogActivationList
-- The newest activations first: the head is the current version.
SELECT version, activated_at FROM catalog_activations ORDER BY id DESC LIMIT $1;
