package api

import (
	"context"
	"net/http"
	"time"

	"github.com/maestro-run/maestro/internal/platform"
)

// replayClockSkew keeps a signature refused this long past its expiry.
// Each API process judges a signature stale by its own clock, and the
// guard judges expiry by the database's: the margin covers the drift
// between them, so a process whose clock runs behind still finds a
// replay refused.
const replayClockSkew = time.Minute

// forgetTimeout bounds forgetting a signature after its request failed.
const forgetTimeout = 2 * time.Second

// ReplayGuard remembers the platform signatures already accepted. The
// ledger is one, shared by every API process on it, so a captured request
// replayed to any of them is refused.
type ReplayGuard interface {
	// PlatformSignatureClaim records id until expires and reports whether
	// this is its first use.
	PlatformSignatureClaim(ctx context.Context, id string, expires time.Time) (first bool, err error)
	// PlatformSignatureForget drops id, so the platform may send it again.
	PlatformSignatureForget(ctx context.Context, id string) error
}

// firstUse claims a verified signature. An error is the guard's, not the
// sender's: the caller answers 503, which the platform may retry.
func (s *Server) firstUse(r *http.Request, sig platform.Signed) (bool, error) {
	if sig.ID == "" {
		return true, nil // a bearer secret: nothing to replay-check
	}
	return s.cfg.Replays.PlatformSignatureClaim(r.Context(), sig.ID, sig.Expires.Add(replayClockSkew))
}

// forget drops a signature whose request failed before it did anything,
// so the platform's retry is not taken for a replay. A failure only costs
// that retry a 401, so it is logged, not answered.
func (s *Server) forget(r *http.Request, sig platform.Signed) {
	if sig.ID == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), forgetTimeout)
	defer cancel()
	if err := s.cfg.Replays.PlatformSignatureForget(ctx, sig.ID); err != nil {
		// The ID is the request's MAC: it is not logged.
		s.cfg.Logger.Error("could not forget a platform signature; the platform's retry will be refused", "path", r.URL.Path, "err", err)
	}
}
