package tools

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/maestro-run/maestro/maestrotype"
)

// A StateRead is a write's declared read of what it changes: its before
// read runs just ahead of the effect and its after read-back once the
// effect succeeded, so a disputed write shows the state it found and the
// state it left. It either calls a read tool of the catalog with arguments
// rendered from the write's, or sends a GET rendered from them to the
// write's own HTTP service.
type StateRead struct {
	// Tool is the read tool to call; empty for a GET.
	Tool string
	// Args render the read tool's arguments, each as a string, like a
	// compensation's.
	Args map[string]*Template
	// Get is the path of a GET on the write's HTTP service; nil for a
	// read tool.
	Get *Template
	// target is the read tool, resolved when the catalog loads.
	target *Tool
}

// The fields a tool row declares its reads under.
const (
	fieldBefore = "before"
	fieldAfter  = "after"
)

// stateReadFile is a before or after block of a tool row.
type stateReadFile struct {
	Tool string            `yaml:"tool"`
	Args map[string]string `yaml:"args"`
	Get  string            `yaml:"get"`
}

func buildStateRead(p *problems, row, tool, field string, f *stateReadFile) *StateRead {
	if f == nil {
		return nil
	}
	r := &StateRead{Tool: f.Tool, Get: parseField(p, row, tool, field+".get", f.Get)}
	if f.Args != nil {
		r.Args = make(map[string]*Template, len(f.Args))
	}
	for name, src := range f.Args {
		if tmpl := parseField(p, row, tool, field+".args."+name, src); tmpl != nil {
			r.Args[name] = tmpl
		}
	}
	return r
}

// StateReadCall is a before or after read rendered for one write.
type StateReadCall struct {
	// Source names what is read, for the record: "tool lookup_tenant" or
	// "GET sandbox /v1/tenants/t_1001".
	Source string
	// Tool and Args are the read tool and its rendered arguments; empty
	// for a GET.
	Tool string
	Args json.RawMessage
	Call ConnectorCall
}

// Render renders the read for one call of write: data is the write's, with
// its receipt once the effect succeeded.
func (r *StateRead) Render(write *Tool, data TemplateData) (StateReadCall, error) {
	if r.Get != nil {
		path, err := r.Get.Execute(data)
		if err != nil {
			return StateReadCall{}, err
		}
		service := write.Connector.HTTPService()
		return StateReadCall{
			Source: fmt.Sprintf("GET %s %s", service, path),
			Call: ConnectorCall{Kind: maestrotype.KindHTTP, Settings: map[string]string{
				"service": service, "method": http.MethodGet, "path": path,
			}},
		}, nil
	}
	if r.target == nil {
		return StateReadCall{}, fmt.Errorf("error rendering read %s: the read tool was not resolved when the catalog loaded", r.Tool)
	}
	args := make(map[string]string, len(r.Args))
	for name, t := range r.Args {
		v, err := t.Execute(data)
		if err != nil {
			return StateReadCall{}, fmt.Errorf("error rendering argument %s of read %s: %w", name, r.Tool, err)
		}
		args[name] = v
	}
	raw, err := json.Marshal(args)
	if err != nil {
		return StateReadCall{}, fmt.Errorf("error encoding arguments of read %s: %w", r.Tool, err)
	}
	if err := r.target.ValidateArgs(raw); err != nil {
		return StateReadCall{}, fmt.Errorf("error validating arguments of read %s: %w", r.Tool, err)
	}
	decoded, err := DecodeArgs(raw)
	if err != nil {
		return StateReadCall{}, err
	}
	call, err := r.target.RenderCall(TemplateData{Args: decoded, Session: data.Session, OperationKey: data.OperationKey})
	if err != nil {
		return StateReadCall{}, fmt.Errorf("error rendering read %s: %w", r.Tool, err)
	}
	return StateReadCall{Source: "tool " + r.Tool, Tool: r.Tool, Args: raw, Call: call}, nil
}

// stateReads checks a tool's before and after reads: only a write that
// performs its own effect declares them, and each reads through a read
// tool of the catalog or a GET on the write's HTTP service, with templates
// that read only what exists when it renders.
func (v *validator) stateReads(row string, t *Tool) {
	v.stateRead(row, fieldBefore, t, t.Before, beforeCall)
	after := afterCall(t)
	after.payload = "an after read renders from the arguments and the receipt, not the payload"
	v.stateRead(row, fieldAfter, t, t.After, after)
}

func (v *validator) stateRead(row, field string, t *Tool, r *StateRead, sc scope) {
	if r == nil {
		return
	}
	p := v.p
	switch {
	case t.Effect == maestrotype.EffectRead || !t.Connector.PerformsEffect():
		p.add(row, field, "only write tools declare a %s read; %s has no effect of its own to read around", field, t.Name)
		return
	case len(t.Connector.Parts()) > 0:
		p.add(row, field, "connector kind %q sends its parts as separate effects; a %s read is declared on a tool of one effect", t.Connector.Kind, field)
		return
	case r.Tool != "" && r.Get != nil:
		p.add(row, field, "name a read tool or a get path, not both")
		return
	case r.Tool == "" && r.Get == nil:
		if !p.already(row, field+".get") {
			p.add(row, field, "name a read tool (tool: …, args: …) or a path to GET on the tool's service (get: …)")
		}
		return
	}
	if r.Get != nil {
		if t.Connector.Kind != maestrotype.KindHTTP {
			p.add(row, field+".get", "a get runs on the tool's HTTP service, but connector kind is %q: name a read tool instead", t.Connector.Kind)
			return
		}
		if r.Args != nil {
			p.add(row, field+".args", "args are for a read tool; a get renders its path from the tool's own arguments")
		}
		v.templateRefs(row, field+".get", t, r.Get, sc)
		return
	}
	target, ok := v.c.tools[r.Tool]
	switch {
	case !ok:
		p.add(row, field+".tool", "unknown tool %q", r.Tool)
		return
	case target.Effect != maestrotype.EffectRead || target.Connector.PerformsEffect():
		p.add(row, field+".tool", "%s is not a read (effect %s, %s): a %s read must have no side effects",
			r.Tool, target.Effect, describeConnector(target.Connector), field)
		return
	}
	r.target = target
	for name, tmpl := range r.Args {
		f := field + ".args." + name
		if target.InputSchema != nil {
			if props := target.InputSchema.properties(); props != nil && !slices.Contains(props, name) {
				p.add(row, f, "%s takes no argument %q (it takes %s)", r.Tool, name, strings.Join(props, ", "))
			}
		}
		v.templateRefs(row, f, t, tmpl, sc)
	}
	if target.InputSchema != nil {
		for _, name := range target.InputSchema.required() {
			if _, ok := r.Args[name]; !ok && !p.already(row, field+".args."+name) {
				p.add(row, field+".args", "%s requires %q", r.Tool, name)
			}
		}
	}
}
