-- Signed-in operators of the browser console. Kept as close to the
-- PostgreSQL schema as SQLite allows; see there for the reasons.
CREATE TABLE console_sessions (
    id_hash     TEXT PRIMARY KEY CHECK (id_hash <> ''),
    operator_id TEXT NOT NULL CHECK (operator_id <> ''),
    csrf_token  TEXT NOT NULL CHECK (csrf_token <> ''),
    created_at  TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    expires_at  TEXT NOT NULL
);

CREATE INDEX console_sessions_expires_idx ON console_sessions (expires_at);
