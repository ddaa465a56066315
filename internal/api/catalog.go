package api

import (
	"net/http"

	"github.com/maestro-run/maestro/apitype"
	"github.com/maestro-run/maestro/internal/admission"
	mt "github.com/maestro-run/maestro/maestrotype"
)

// handleCatalogReload has the process re-read its own catalog file. It
// takes no body: an operator key can make a process load the file its host
// holds, never send it one.
func (s *Server) handleCatalogReload(w http.ResponseWriter, r *http.Request) {
	if s.cfg.ReloadCatalog == nil {
		writeRefusal(w, admission.BadRequest(http.StatusNotFound, mt.CodeNotFound, "this process does not reload its catalog"))
		return
	}
	res, err := s.cfg.ReloadCatalog(r.Context())
	switch {
	case len(res.Violations) > 0:
		s.cfg.Logger.Warn("catalog reload refused: the catalog in use is kept", "op", operatorFrom(r.Context()).ID,
			"kept", res.Version, "violations", len(res.Violations))
		writeJSON(w, http.StatusUnprocessableEntity, res)
	case err != nil:
		s.cfg.Logger.Error("catalog reload failed: the catalog in use is kept", "err", err)
		writeRefusal(w, unavailableRefusal())
	default:
		s.cfg.Logger.Info("catalog reloaded", "op", operatorFrom(r.Context()).ID, "version", res.Version, "previous", res.Previous, "changed", res.Changed)
		writeJSON(w, http.StatusOK, res)
	}
}

// catalogHistory is how many activations GET /v1/catalog/versions lists.
const catalogHistory = 50

// handleCatalogVersions lists the recent catalog activations, so an
// operator can see which version every process follows and since when.
func (s *Server) handleCatalogVersions(w http.ResponseWriter, r *http.Request) {
	list, err := s.cfg.Store.CatalogActivationList(r.Context(), catalogHistory)
	if err != nil {
		s.cfg.Logger.Error("listing catalog versions failed", "err", err)
		writeRefusal(w, unavailableRefusal())
		return
	}
	out := apitype.CatalogVersions{Served: s.cfg.Catalog.Load().Hash(), Activations: make([]apitype.CatalogActivation, 0, len(list))}
	for _, a := range list {
		out.Activations = append(out.Activations, apitype.CatalogActivation(a))
	}
	if len(list) > 0 {
		out.Current = list[0].Version
	}
	writeJSON(w, http.StatusOK, out)
}
