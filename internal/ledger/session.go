package ledger

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"maps"

	"github.com/maestro-run/maestro/maestrotype"
)

// SessionUpsert inserts with ON CONFLICT DO NOTHING, so of any number of
// concurrent first calls exactly one creates the session, and every caller
// gets back the facts that call stated.
func (l *ledger) SessionUpsert(ctx context.Context, s Session) (Session, error) {
	return l.sessionUpsert(ctx, s, 0)
}

// sessionUpsert is SessionUpsert whose insert, when the session is new,
// is refused past maxLive sessions of the agent not ended (see capped).
func (l *ledger) sessionUpsert(ctx context.Context, s Session, maxLive int) (Session, error) {
	switch {
	case s.ID == "":
		return Session{}, errors.New("error upserting session: ID is required")
	case s.AgentID == "":
		return Session{}, fmt.Errorf("error upserting session %q: agent ID is required", s.ID)
	}
	facts := s.Facts
	if facts == nil {
		facts = map[string]string{}
	}
	factsArg, err := jsonArg(&facts)
	if err != nil {
		return Session{}, fmt.Errorf("error upserting session %q: %w", s.ID, err)
	}
	prov := map[string]maestrotype.Provenance{}
	for name, p := range s.Provenance {
		if _, ok := facts[name]; !ok {
			return Session{}, fmt.Errorf("error upserting session %q: provenance for %q, which is not a fact", s.ID, name)
		}
		if _, err := maestrotype.ParseProvenance(string(p)); err != nil {
			return Session{}, fmt.Errorf("error upserting session %q: fact %q: %w", s.ID, name, err)
		}
		prov[name] = p
	}
	provArg, err := jsonArg(&prov)
	if err != nil {
		return Session{}, fmt.Errorf("error upserting session %q: %w", s.ID, err)
	}

	// Every call but a session's first finds it: read it, off the writer
	// where the backend has readers, and write only when it is missing.
	switch got, err := l.SessionGet(ctx, s.ID); {
	case err == nil:
		return got, nil
	case !errors.Is(err, ErrNotFound):
		return Session{}, fmt.Errorf("error upserting session %q: %w", s.ID, err)
	}
	var got Session
	err = l.capped(ctx, CapLiveSessions, s.AgentID, maxLive, "SessionCountLive", func(tx *sql.Tx) error {
		var err error
		got, err = scanSession(tx.QueryRowContext(ctx, l.query("SessionInsert"), s.ID, s.AgentID, factsArg, provArg))
		return err
	})
	var capErr *CapError
	switch {
	case err == nil:
		return got, nil
	case errors.As(err, &capErr):
		// A concurrent first call may have created this very session
		// meanwhile: a later call in a session is never refused by the cap.
		if got, gerr := l.SessionGet(ctx, s.ID); gerr == nil {
			return got, nil
		}
		return Session{}, err
	case !errors.Is(err, sql.ErrNoRows):
		return Session{}, fmt.Errorf("error upserting session %q: %w", s.ID, err)
	}
	// The session exists; ON CONFLICT waited for its writer to commit, so
	// the row is visible now.
	return l.SessionGet(ctx, s.ID)
}

func (l *ledger) SessionFactSet(ctx context.Context, id, name string, fact maestrotype.Fact) (Session, error) {
	switch {
	case name == "" || fact.Value == "":
		return Session{}, fmt.Errorf("error setting a fact of session %q: a name and a value are required", id)
	case fact.Provenance == maestrotype.ProvenanceAgentDeclared:
		return Session{}, fmt.Errorf("error setting fact %q of session %q: agents state facts only with the first call", name, id)
	}
	if _, err := maestrotype.ParseProvenance(string(fact.Provenance)); err != nil {
		return Session{}, fmt.Errorf("error setting fact %q of session %q: %w", name, id, err)
	}
	var got Session
	err := l.withTx(ctx, func(tx *sql.Tx) error {
		s, err := scanSession(tx.QueryRowContext(ctx, l.query("SessionGetForUpdate"), id))
		if err != nil {
			return notFound(err)
		}
		facts := maps.Clone(s.Facts)
		if facts == nil {
			facts = map[string]string{}
		}
		prov := maps.Clone(s.Provenance)
		if prov == nil {
			prov = map[string]maestrotype.Provenance{}
		}
		facts[name], prov[name] = fact.Value, fact.Provenance
		factsArg, err := jsonArg(&facts)
		if err != nil {
			return err
		}
		provArg, err := jsonArg(&prov)
		if err != nil {
			return err
		}
		got, err = scanSession(tx.QueryRowContext(ctx, l.query("SessionFactsSet"), id, factsArg, provArg))
		return err
	})
	if err != nil {
		return Session{}, fmt.Errorf("error setting fact %q of session %q: %w", name, id, err)
	}
	return got, nil
}

func (l *ledger) SessionGet(ctx context.Context, id string) (Session, error) {
	s, err := scanSession(l.conn.QueryRowContext(ctx, l.query("SessionGet"), id))
	if err != nil {
		return Session{}, fmt.Errorf("error getting session %q: %w", id, notFound(err))
	}
	return s, nil
}

func (l *ledger) SessionHalt(ctx context.Context, id, step, reason string) (Session, error) {
	if step == "" {
		return Session{}, fmt.Errorf("error halting session %q: the failing step is required", id)
	}
	s, _, err := transition(ctx, l, scanSession, "SessionGetForUpdate", "SessionHalt", id, step, textArg(reason))
	if err != nil {
		return Session{}, fmt.Errorf("error halting session %q: %w", id, err)
	}
	return s, nil
}

func (l *ledger) SessionResolve(ctx context.Context, id, actor, reason string, how Resolution) (Session, error) {
	switch {
	case actor == "":
		return Session{}, fmt.Errorf("error resolving session %q: actor is required", id)
	case how != ResolvedByHand && how != ResolvedRetry:
		return Session{}, fmt.Errorf("error resolving session %q: resolution %q is neither %s nor %s", id, how, ResolvedByHand, ResolvedRetry)
	}
	var (
		got   Session
		moved bool
	)
	err := l.withTx(ctx, func(tx *sql.Tx) error {
		before, err := scanSession(tx.QueryRowContext(ctx, l.query("SessionGetForUpdate"), id))
		if err != nil {
			return fmt.Errorf("error locking the row: %w", notFound(err))
		}
		got, err = scanSession(tx.QueryRowContext(ctx, l.query("SessionResolve"), id, actor, textArg(reason), string(how)))
		switch {
		case errors.Is(err, sql.ErrNoRows):
			got = before
			return nil
		case err != nil:
			return fmt.Errorf("error updating the row: %w", err)
		}
		moved = true
		if how != ResolvedByHand {
			return nil
		}
		if _, err := tx.ExecContext(ctx, l.query("UndoCloseByHand"), id, "compensated by hand ("+actor+"): "+reason); err != nil {
			return fmt.Errorf("error closing the undo entries the rollback could not run: %w", err)
		}
		return nil
	})
	if err != nil {
		return Session{}, fmt.Errorf("error resolving session %q: %w", id, err)
	}
	if !moved {
		return got, fmt.Errorf("error resolving session %q: it is %s: %w", id, got.State, ErrSessionNotHalted)
	}
	return got, nil
}

func (l *ledger) SessionRollbackBegin(ctx context.Context, id string) (Session, error) {
	s, _, err := transition(ctx, l, scanSession, "SessionGetForUpdate", "SessionRollbackBegin", id)
	if err != nil {
		return Session{}, fmt.Errorf("error marking session %q as being rolled back: %w", id, err)
	}
	return s, nil
}

func (l *ledger) SessionRollbackEnd(ctx context.Context, id string) (Session, error) {
	s, _, err := transition(ctx, l, scanSession, "SessionGetForUpdate", "SessionRollbackEnd", id)
	if err != nil {
		return Session{}, fmt.Errorf("error ending the rollback of session %q: %w", id, err)
	}
	return s, nil
}

func (l *ledger) SessionEnd(ctx context.Context, id string, transcript json.RawMessage) (Session, bool, error) {
	s, ended, err := transition(ctx, l, scanSession, "SessionGetForUpdate", "SessionEnd", id, rawJSONArg(transcript))
	if err != nil {
		return Session{}, false, fmt.Errorf("error ending session %q: %w", id, err)
	}
	return s, ended, nil
}

func scanSession(row rowScanner) (Session, error) { return scanSessionWith(row) }

// scanSessionWith scans a session row followed by any extra columns into
// extra.
func scanSessionWith(row rowScanner, extra ...any) (Session, error) {
	var s Session
	dest := []any{
		&s.ID,
		&s.AgentID,
		&s.State,
		jsonCol[map[string]string]{&s.Facts},
		jsonCol[map[string]maestrotype.Provenance]{&s.Provenance},
		textCol{&s.HaltStep},
		textCol{&s.HaltReason},
		textCol{&s.ResolvedBy},
		textCol{&s.ResolveReason},
		rawJSONCol{&s.Transcript},
		timeCol{&s.CreatedAt},
		timeCol{&s.UpdatedAt},
		nullTimeCol{&s.EndedAt},
		nullTimeCol{&s.RollbackStartedAt},
		textCol{(*string)(&s.Resolution)},
	}
	err := row.Scan(append(dest, extra...)...)
	return s, err
}

// SessionAtAdmission is a call's session as admission reads it in the
// transaction that records the call.
type SessionAtAdmission struct {
	Session
	// ApprovalPending is whether an approval request of the session is
	// still pending, whether or not it holds the session's writes.
	ApprovalPending bool
}

func scanSessionAtAdmission(row rowScanner) (SessionAtAdmission, error) {
	var s SessionAtAdmission
	var err error
	s.Session, err = scanSessionWith(row, &s.ApprovalPending)
	return s, err
}

// Fact is the session's fact name with who vouches for it; ok is false
// when the session has no such fact.
func (s Session) Fact(name string) (maestrotype.Fact, bool) {
	v, ok := s.Facts[name]
	if !ok {
		return maestrotype.Fact{}, false
	}
	p := s.Provenance[name]
	if p == "" {
		p = maestrotype.ProvenanceAgentDeclared
	}
	return maestrotype.Fact{Value: v, Provenance: p}, true
}

// FactsTrusted is the session's facts whose provenance trusted accepts:
// what an auto-approval rule may rest on.
func (s Session) FactsTrusted(trusted func(maestrotype.Provenance) bool) map[string]string {
	out := map[string]string{}
	for name := range s.Facts {
		if f, _ := s.Fact(name); trusted(f.Provenance) {
			out[name] = f.Value
		}
	}
	return out
}
