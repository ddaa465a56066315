package console

import (
	"errors"
	"net/http"

	"github.com/maestro-run/maestro/apiclient"
	"github.com/maestro-run/maestro/apitype"
	"github.com/maestro-run/maestro/tools"
)

// catalogView is the catalog versions page, with a refused reload's
// violations when there are some.
type catalogView struct {
	apitype.CatalogVersions
	Refused *apitype.CatalogReload
	// Reload says whether the operator may reload the catalog.
	Reload permit
}

func (c *Console) handleCatalog(w http.ResponseWriter, r *http.Request, v *visit) {
	c.showCatalog(w, r, v, http.StatusOK, "", nil)
}

func (c *Console) showCatalog(w http.ResponseWriter, r *http.Request, v *visit, status int, problem string, refused *apitype.CatalogReload) {
	versions, err := v.api.CatalogVersions(r.Context())
	if err != nil {
		c.apiProblem(w, r, err)
		return
	}
	c.renderView(w, r, status, "catalog.html", viewOf(r, v, "Catalog", problem, catalogView{CatalogVersions: versions, Refused: refused,
		Reload: c.permit(v.op, tools.PermReloadCatalog)}))
}

func (c *Console) handleCatalogReload(w http.ResponseWriter, r *http.Request, v *visit) {
	_, err := v.api.ReloadCatalog(r.Context())
	var refused *apiclient.CatalogRefusedError
	switch {
	case errors.As(err, &refused):
		c.showCatalog(w, r, v, http.StatusUnprocessableEntity, "The catalog file breaks the rules below, so the catalog in use was kept.", &refused.Reload)
		return
	case err != nil:
		status, msg := apiError(err)
		c.showCatalog(w, r, v, status, msg, nil)
		return
	}
	http.Redirect(w, r, "/console/catalog?done=reloaded", http.StatusSeeOther)
}
