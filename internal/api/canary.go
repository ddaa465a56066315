package api

import (
	"net/http"

	"github.com/maestro-run/maestro/internal/admission"
	mt "github.com/maestro-run/maestro/maestrotype"
)

// handleCanary lists each canary tool's last result and whether agents
// are kept from it.
func (s *Server) handleCanary(w http.ResponseWriter, r *http.Request) {
	if s.cfg.Canary == nil {
		writeRefusal(w, admission.BadRequest(http.StatusNotFound, mt.CodeNotFound, "this process runs no canary"))
		return
	}
	out, err := s.cfg.Canary.Status(r.Context(), s.cfg.Catalog.Load())
	if err != nil {
		s.cfg.Logger.Error("reading the canary failed", "err", err)
		writeRefusal(w, unavailableRefusal())
		return
	}
	writeJSON(w, http.StatusOK, out)
}

// handleCanaryRun runs the canary now and answers once it has finished.
// It takes no body: what the canary fires is the catalog's to say.
func (s *Server) handleCanaryRun(w http.ResponseWriter, r *http.Request) {
	if s.cfg.Canary == nil || s.cfg.RunCanary == nil {
		writeRefusal(w, admission.BadRequest(http.StatusNotFound, mt.CodeNotFound, "this process runs no canary"))
		return
	}
	if r.ContentLength > 0 {
		writeRefusal(w, admission.BadRequest(http.StatusBadRequest, mt.CodeInvalidRequest, "POST /v1/canary/run takes no body: the catalog says what the canary fires"))
		return
	}
	runID, err := s.cfg.RunCanary(r.Context())
	if err != nil {
		s.cfg.Logger.Error("canary run failed", "err", err)
		writeRefusal(w, unavailableRefusal())
		return
	}
	s.cfg.Logger.Info("canary run", "op", operatorFrom(r.Context()).ID, "run", runID)
	out, err := s.cfg.Canary.Status(r.Context(), s.cfg.Catalog.Load())
	if err != nil {
		s.cfg.Logger.Error("reading the canary failed", "err", err)
		writeRefusal(w, unavailableRefusal())
		return
	}
	out.RunID = runID
	writeJSON(w, http.StatusOK, out)
}
