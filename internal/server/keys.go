package server

import (
	"fmt"
	"strings"

	"github.com/maestro-run/maestro/tools"
)

// checkKeys refuses, outside dev mode, a catalog in which an agent or
// operator authenticates with a development key: those keys are published
// with maestro, so anyone who reads them could call or approve as it.
func checkKeys(cfg Config, cat *tools.Catalog) error {
	if cfg.Dev {
		return nil
	}
	holders := cat.DemoKeyHolders()
	if len(holders) == 0 {
		return nil
	}
	return fmt.Errorf("the demo keys published with maestro (%s, %s) authenticate %s; they are accepted only in dev mode",
		tools.DemoAgentKey, tools.DemoOpsKey, strings.Join(holders, " and "))
}
