-- Reconciliation: how each effect whose outcome was unknown got settled.
--
-- An effect lands in needs_reconciliation when a provider may have acted
-- without maestro recording its answer (a lost response, a worker that
-- died between the provider and the ledger). Before anything is sent again
-- it is checked against the provider's own records, replayed under the
-- provider's idempotency key, or held for a human. Every such finding and
-- every human decision is an event here, written in the same transaction as
-- the change it explains. Like approval_events, the log is append-only.
--
-- operation_key has no foreign key: a claim whose call provably never
-- reached the provider is released (its effect row deleted), and the log of
-- what was found before that must survive it.
CREATE TABLE reconciliation_events (
    id            bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    operation_key text        NOT NULL,
    kind          text        NOT NULL
        CHECK (kind IN ('adopted', 'absent', 'replayed', 'escalated', 'delivered', 'not_delivered')),
    actor         text        NOT NULL CHECK (actor <> ''),
    reason        text        NOT NULL CHECK (reason <> ''),
    receipt       jsonb,
    created_at    timestamptz NOT NULL DEFAULT now(),
    -- Adopting a provider's record, or a human attesting delivery, names the
    -- receipt it settles the effect with.
    CONSTRAINT reconciliation_events_settling_success_has_receipt
        CHECK (kind NOT IN ('adopted', 'delivered') OR receipt IS NOT NULL)
);

CREATE INDEX reconciliation_events_operation_key_id_idx ON reconciliation_events (operation_key, id);

CREATE FUNCTION reconciliation_events_refuse_change() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'reconciliation_events is append-only: % refused', TG_OP
        USING ERRCODE = 'insufficient_privilege';
END;
$$;

CREATE TRIGGER reconciliation_events_append_only
    BEFORE UPDATE OR DELETE OR TRUNCATE ON reconciliation_events
    FOR EACH STATEMENT EXECUTE FUNCTION reconciliation_events_refuse_change();

-- A provider record found by a lookup is adopted only if no other operation
-- key already holds it as its receipt; this index answers that question.
CREATE INDEX effects_receipt_id_idx ON effects ((receipt ->> 'id')) WHERE receipt IS NOT NULL;
