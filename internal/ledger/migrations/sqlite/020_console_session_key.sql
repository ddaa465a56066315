-- A console session is bound to the operator key it was signed in with;
-- see the PostgreSQL migration for the reasons. SQLite adds a NOT NULL
-- column only with a default, so the ledger refuses an empty binding.
DELETE FROM console_sessions;

ALTER TABLE console_sessions ADD COLUMN key_binding TEXT NOT NULL DEFAULT '';
