-- Approvers see the effect class and the reversibility of the call they
-- decide. Kept as close to the PostgreSQL schema as SQLite allows; see
-- there for the reasons.
ALTER TABLE approval_requests
    ADD COLUMN effect TEXT NOT NULL DEFAULT '';
ALTER TABLE approval_requests
    ADD COLUMN reversibility TEXT NOT NULL DEFAULT '';
