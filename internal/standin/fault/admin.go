package fault

import (
	"encoding/json"
	"fmt"
	"net/http"
)

// AdminPath is where every stand-in serves its fault controls. It sits under
// /_standin/ so it can never collide with a provider's own paths.
const AdminPath = "/_standin/faults"

// maxAdminBody bounds a rule upload; a rule is a few hundred bytes.
const maxAdminBody = 64 << 10

// State is the admin endpoint's view of the injector.
type State struct {
	Rules []Rule `json:"rules"`
	Held  int    `json:"held"`
}

// RegisterAdmin serves the fault controls on mux:
//
//	GET    /_standin/faults          pending rules and how many requests are held
//	POST   /_standin/faults          add one rule (see below)
//	DELETE /_standin/faults          drop every rule and release held requests
//	POST   /_standin/faults/release  release held requests, keeping the rules
//
// A rule is JSON with Rule's fields in snake case; delay is a Go duration:
//
//	{"action":"fail","status":503,"times":2}
//	{"action":"delay","delay":"30s","method":"POST","path":"/v1/refunds"}
//	{"action":"hang","phase":"after_effect"}
func (i *Injector) RegisterAdmin(mux *http.ServeMux) {
	mux.HandleFunc("GET "+AdminPath, func(w http.ResponseWriter, _ *http.Request) {
		i.writeState(w, http.StatusOK)
	})
	mux.HandleFunc("POST "+AdminPath, i.handleAdd)
	mux.HandleFunc("DELETE "+AdminPath, func(w http.ResponseWriter, _ *http.Request) {
		i.Reset()
		i.writeState(w, http.StatusOK)
	})
	mux.HandleFunc("POST "+AdminPath+"/release", func(w http.ResponseWriter, _ *http.Request) {
		i.Release()
		i.writeState(w, http.StatusOK)
	})
}

func (i *Injector) handleAdd(w http.ResponseWriter, r *http.Request) {
	var rule Rule
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxAdminBody)).Decode(&rule); err != nil {
		writeAdminError(w, fmt.Errorf("error decoding fault rule: %w", err))
		return
	}
	if err := i.Add(rule); err != nil {
		writeAdminError(w, err)
		return
	}
	i.writeState(w, http.StatusCreated)
}

func (i *Injector) writeState(w http.ResponseWriter, status int) {
	state := State{Rules: i.Rules(), Held: i.Held()}
	if state.Rules == nil {
		state.Rules = []Rule{}
	}
	writeAdminJSON(w, status, state)
}

func writeAdminError(w http.ResponseWriter, err error) {
	writeAdminJSON(w, http.StatusBadRequest, map[string]string{"error": err.Error()})
}

func writeAdminJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	// Encoding plain maps and rules cannot fail; a write error means the
	// admin client went away, which there is no one to report to.
	_ = json.NewEncoder(w).Encode(v)
}
