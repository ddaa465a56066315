-- Signed-in operators of the browser console. A session is named by the
-- SHA-256 of the token in its cookie, so a leaked table cannot be replayed
-- as cookies. csrf_token is echoed in every form the session posts.
-- Expired rows are dead: reads ignore them and sign-ins delete a bounded
-- batch, so the table holds about one lifetime of sign-ins.
CREATE TABLE console_sessions (
    id_hash     text        PRIMARY KEY CHECK (id_hash <> ''),
    operator_id text        NOT NULL CHECK (operator_id <> ''),
    csrf_token  text        NOT NULL CHECK (csrf_token <> ''),
    created_at  timestamptz NOT NULL DEFAULT now(),
    expires_at  timestamptz NOT NULL
);

CREATE INDEX console_sessions_expires_idx ON console_sessions (expires_at);
