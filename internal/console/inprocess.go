package console

import (
	"net/http"

	"github.com/maestro-run/maestro/apiclient"
	"github.com/maestro-run/maestro/internal/api"
	"github.com/maestro-run/maestro/internal/inprocess"
	"github.com/maestro-run/maestro/tools"
)

// apiFor is a typed API client that acts as op, served in process: the
// console never holds an operator's key after sign-in, and every action
// meets the same checks as a CLI call with that key.
func (c *Console) apiFor(op *tools.Operator) *apiclient.Client {
	asOp := func(r *http.Request) *http.Request { return r.WithContext(api.AsOperator(r.Context(), op)) }
	return apiclient.New("http://console.invalid", "", apiclient.Options{
		HTTPClient: &http.Client{Transport: inprocess.Transport{Handler: c.cfg.API, Prepare: asOp}},
	})
}
