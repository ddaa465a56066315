package mcp

import (
	"sync"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// withheldTools tracks, per agent, the tools taken off its server's list
// because Config.Withheld reported them.
type withheldTools struct {
	mu      sync.Mutex
	removed map[string]map[string]bool // agent ID → tool names
}

// offer brings an agent's tool list in line with what is withheld now:
// a withheld tool is removed, and one no longer withheld is added back.
func (h *Handler) offer(agentID string, srv *sdk.Server) {
	w := &h.withheld
	w.mu.Lock()
	defer w.mu.Unlock()
	cat := h.cfg.Catalog.Load()
	agent, ok := cat.Agent(agentID)
	if !ok {
		return
	}
	if w.removed == nil {
		w.removed = map[string]map[string]bool{}
	}
	removed := w.removed[agentID]
	if removed == nil {
		removed = map[string]bool{}
		w.removed[agentID] = removed
	}
	for _, t := range cat.Tools() {
		if !t.RequiresGreenCanary || !agent.Allows(t.Name) {
			continue
		}
		switch withheld := h.cfg.Withheld(t); {
		case withheld && !removed[t.Name]:
			srv.RemoveTools(t.Name)
			removed[t.Name] = true
		case !withheld && removed[t.Name]:
			def, ownsSessionArg, err := toolDef(t)
			if err != nil {
				continue
			}
			srv.AddTool(def, h.callTool(t, ownsSessionArg))
			delete(removed, t.Name)
		}
	}
}
