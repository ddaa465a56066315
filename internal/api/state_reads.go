package api

import (
	"context"
	"errors"

	"github.com/maestro-run/maestro/apitype"
	"github.com/maestro-run/maestro/internal/ledger"
	mt "github.com/maestro-run/maestro/maestrotype"
)

// stateReads is what the catalog's reads saw around an invocation's
// effect, or nil for a read, a call that never claimed its effect, or a
// tool that declares no reads. The view goes without them rather than
// fail when the ledger does not answer.
//
// read, when it carries them, are the reads as the ledger returned them
// with the outcome, so they are not read again.
func (s *Server) stateReads(ctx context.Context, inv ledger.Invocation, read *readMessage) *apitype.StateReads {
	if inv.Route == mt.RouteRead {
		return nil
	}
	// Only a write whose tool declares a before or after read has any: a
	// tool the catalog no longer knows is read for.
	if t, ok := s.cfg.Catalog.Load().Tool(inv.Tool); ok && t.Before == nil && t.After == nil {
		return nil
	}
	if read != nil && read.stateReads != nil {
		return stateReadsView(*read.stateReads)
	}
	r, err := s.cfg.Store.EffectStateReadsGet(ctx, inv.OperationKey)
	if err != nil {
		if !errors.Is(err, ledger.ErrNotFound) {
			s.cfg.Logger.Warn("could not read the effect's state reads", "operation_key", inv.OperationKey, "err", err)
		}
		return nil
	}
	return stateReadsView(r)
}

// sessionStateReads maps the operation keys of a session's effects to
// what their reads saw.
func (s *Server) sessionStateReads(ctx context.Context, sessionID string) (map[string]*apitype.StateReads, error) {
	rs, err := s.cfg.Store.EffectStateReadsListBySession(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	out := make(map[string]*apitype.StateReads, len(rs))
	for _, r := range rs {
		out[r.OperationKey] = stateReadsView(r)
	}
	return out, nil
}

func stateReadsView(r ledger.EffectStateReads) *apitype.StateReads {
	if r.Before == nil && r.After == nil {
		return nil
	}
	return &apitype.StateReads{Before: r.Before, After: r.After}
}
