-- A console session is bound to the operator key it was signed in with:
-- key_binding is a hash of the key's catalog hash, and a session whose
-- operator no longer has that key in the served catalog ends at once.
-- Sessions signed in before this could not be checked, so they end here.
DELETE FROM console_sessions;

ALTER TABLE console_sessions ADD COLUMN key_binding text NOT NULL DEFAULT '' CHECK (key_binding <> '');

ALTER TABLE console_sessions ALTER COLUMN key_binding DROP DEFAULT;
