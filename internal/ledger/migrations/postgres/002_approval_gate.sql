-- The approval gate: an append-only log of everything that happened to an
-- approval request, and the single-use tokens that let an approved call run
-- once with exactly the arguments a human (or a logged policy) approved.

-- Every request, decision, timeout and token use, in order. Rows are only
-- ever inserted: the trigger below refuses UPDATE, DELETE and TRUNCATE for
-- every role, so the audit trail cannot be rewritten by the service or by an
-- operator with a SQL prompt. args_hash_before is the request's arguments
-- hash when the event happened; args_hash_after is set only by 'modified'.
CREATE TABLE approval_events (
    id               bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    approval_id      text        NOT NULL REFERENCES approval_requests (id),
    kind             text        NOT NULL
        CHECK (kind IN ('requested', 'approved', 'rejected', 'modified', 'timed_out', 'auto_approved',
                        'token_minted', 'token_used', 'token_refused', 'decision_refused')),
    actor            text        NOT NULL CHECK (actor <> ''),
    args_hash_before text        NOT NULL,
    args_hash_after  text,
    detail           jsonb,
    created_at       timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT approval_events_only_modify_changes_args
        CHECK ((kind = 'modified') = (args_hash_after IS NOT NULL))
);

CREATE INDEX approval_events_approval_id_id_idx ON approval_events (approval_id, id);

CREATE FUNCTION approval_events_refuse_change() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'approval_events is append-only: % refused', TG_OP
        USING ERRCODE = 'insufficient_privilege';
END;
$$;

-- Statement-level, so even an UPDATE or DELETE that matches no row fails:
-- the attempt itself is the bug worth surfacing.
CREATE TRIGGER approval_events_append_only
    BEFORE UPDATE OR DELETE OR TRUNCATE ON approval_events
    FOR EACH STATEMENT EXECUTE FUNCTION approval_events_refuse_change();

-- A token authorises one execution of an approved request with the
-- arguments that hash to args_hash. Spending sets used_at; an unused token
-- that a fresh one supersedes is deleted (the log keeps its minting).
CREATE TABLE approval_tokens (
    id          text        PRIMARY KEY,
    approval_id text        NOT NULL REFERENCES approval_requests (id),
    args_hash   text        NOT NULL,
    expires_at  timestamptz NOT NULL,
    used_at     timestamptz,
    used_by     text        CHECK (used_by <> ''),
    created_at  timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT approval_tokens_used_by_iff_used
        CHECK ((used_at IS NULL) = (used_by IS NULL))
);

CREATE INDEX approval_tokens_approval_id_created_at_idx ON approval_tokens (approval_id, created_at);

-- At most one token per request can still be spent.
CREATE UNIQUE INDEX approval_tokens_one_unused_idx ON approval_tokens (approval_id) WHERE used_at IS NULL;
