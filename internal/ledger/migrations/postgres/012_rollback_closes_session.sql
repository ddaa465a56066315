-- A rollback closes its session to new effects before it waits for the
-- calls still in flight: rollback_started_at is set when it begins and
-- cleared when it finishes or halts, and an effect claim reads it under the
-- session row's lock, so a call racing the rollback is either claimed
-- first (and waited for) or refused. resolution says how an operator
-- resolved the last halt: by_hand (the entries the rollback could not run
-- were closed with the reason) or retry (the rollback ran again).
ALTER TABLE sessions ADD COLUMN rollback_started_at timestamptz;
ALTER TABLE sessions ADD COLUMN resolution text
    CHECK (resolution IN ('by_hand', 'retry'));
