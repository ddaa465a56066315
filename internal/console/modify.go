package console

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/maestro-run/maestro/apitype"
	"github.com/maestro-run/maestro/tools"
)

// modifyView is the form that edits a request's arguments, generated from
// its tool's schema.
type modifyView struct {
	Approval apitype.Approval
	Inputs   []input
	Reason   string
	// Problems are the schema's objections to the last submission.
	Problems []string
}

// input is one form control for one argument.
type input struct {
	tools.Field
	Value string
	// Kind is the control: text, number, checkbox, select or json.
	Kind    string
	Step    string
	Checked bool
	// Money says what the value stands for when the catalog declares the
	// argument an amount of money; empty otherwise.
	Money string
}

// diffView is the before/after review a modification needs before it is
// sent.
type diffView struct {
	Approval apitype.Approval
	Rows     []diffRow
	Args     string
	Reason   string
}

type diffRow struct {
	Name          string
	Before, After argValue
	Changed       bool
}

func (c *Console) modifiable(w http.ResponseWriter, r *http.Request, v *visit) (apitype.Approval, *tools.Tool, bool) {
	a, err := v.api.Approval(r.Context(), r.PathValue("id"))
	if err != nil {
		c.apiProblem(w, r, err)
		return a, nil, false
	}
	tool, ok := c.cfg.Catalog.Load().Tool(a.Tool)
	if !ok {
		c.renderError(w, r, http.StatusConflict, fmt.Sprintf("The tool %s is no longer in the catalog, so no form can be built for it. Approve or reject the request as it stands.", a.Tool))
		return a, nil, false
	}
	return a, tool, true
}

func (c *Console) handleModifyForm(w http.ResponseWriter, r *http.Request, v *visit) {
	a, tool, ok := c.modifiable(w, r, v)
	if !ok {
		return
	}
	var current map[string]json.RawMessage
	_ = json.Unmarshal(a.Args, &current)
	c.renderPage(w, r, v, http.StatusOK, "modify.html", "Modify "+a.Tool, modifyView{Approval: a, Inputs: inputs(tool, func(name string) (json.RawMessage, bool) {
		raw, ok := current[name]
		return raw, ok
	})})
}

// handleModifyReview checks the edited arguments against the tool's schema
// and shows what changes; nothing is decided until the operator confirms.
func (c *Console) handleModifyReview(w http.ResponseWriter, r *http.Request, v *visit) {
	a, tool, ok := c.modifiable(w, r, v)
	if !ok {
		return
	}
	args, problems := argsFromForm(tool, a.Args, r)
	if len(problems) == 0 {
		if err := tool.ValidateArgs(args); err != nil {
			problems = violations(err)
		}
	}
	reason := r.PostFormValue("reason")
	if len(problems) > 0 {
		c.renderView(w, r, http.StatusUnprocessableEntity, "modify.html", view{Title: "Modify " + a.Tool, Op: v.op, CSRF: v.csrf,
			Problem: "The changed arguments do not fit the tool's schema; nothing was decided.",
			Data: modifyView{Approval: a, Reason: reason, Problems: problems, Inputs: inputs(tool, func(name string) (json.RawMessage, bool) {
				return json.RawMessage(strconv.Quote(r.PostFormValue("arg." + name))), r.PostForm.Has("arg." + name)
			})}})
		return
	}
	c.renderPage(w, r, v, http.StatusOK, "diff.html", "Confirm changes to "+a.Tool, diffView{Approval: a, Rows: diff(a.Args, args, tool.MoneyFields), Args: string(args), Reason: reason})
}

func (c *Console) handleModifyConfirm(w http.ResponseWriter, r *http.Request, v *visit) {
	id := r.PathValue("id")
	args := json.RawMessage(r.PostFormValue("args"))
	if !json.Valid(args) {
		c.showApproval(w, r, v, http.StatusUnprocessableEntity, "The confirmed arguments are not valid JSON; nothing was decided. Modify the request again.")
		return
	}
	if _, err := v.api.Modify(r.Context(), id, args, r.PostFormValue("reason")); err != nil {
		c.refused(w, r, v, err)
		return
	}
	http.Redirect(w, r, approvalPath(id)+"?done=modified", http.StatusSeeOther)
}

// inputs builds a control per schema field, filled from value.
func inputs(tool *tools.Tool, value func(string) (json.RawMessage, bool)) []input {
	var out []input
	for _, f := range tool.InputSchema.Fields() {
		in := input{Field: f, Kind: "text"}
		raw, ok := value(f.Name)
		if ok {
			in.Value = scalar(raw)
		}
		if cur, money := tool.MoneyFields[f.Name]; money {
			in.Money = "An amount of " + cur.Code() + " in its minor unit (cents for USD)."
			if v := valueOf(raw, tool.MoneyFields, f.Name); ok && v.Money != "" {
				in.Money += " " + v.Raw + " is " + v.Money + "."
			}
		}
		switch {
		case len(f.Enum) > 0:
			in.Kind = "select"
		case f.Type == "integer":
			in.Kind, in.Step = "number", "1"
		case f.Type == "number":
			in.Kind, in.Step = "number", "any"
		case f.Type == "boolean":
			in.Kind, in.Checked = "checkbox", in.Value == "true" || in.Value == "on"
		case f.Type == "":
			in.Kind = "json"
			if ok {
				in.Value = prettyJSON(raw)
			}
		}
		out = append(out, in)
	}
	return out
}

// argsFromForm reads the form's controls back into arguments, typed as the
// schema says. Arguments the schema does not describe are kept as they
// were; an optional one left empty is dropped.
func argsFromForm(tool *tools.Tool, frozen json.RawMessage, r *http.Request) (json.RawMessage, []string) {
	args := map[string]json.RawMessage{}
	_ = json.Unmarshal(frozen, &args)
	var problems []string
	for _, f := range tool.InputSchema.Fields() {
		text := strings.TrimSpace(r.PostFormValue("arg." + f.Name))
		if f.Type == "boolean" {
			args[f.Name] = json.RawMessage(strconv.FormatBool(text != ""))
			continue
		}
		if text == "" && !f.Required {
			delete(args, f.Name)
			continue
		}
		raw, err := typed(f, text)
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s: %v", f.Name, err))
			continue
		}
		args[f.Name] = raw
	}
	b, err := json.Marshal(args)
	if err != nil {
		problems = append(problems, err.Error())
	}
	return b, problems
}

func typed(f tools.Field, text string) (json.RawMessage, error) {
	switch f.Type {
	case "integer":
		n, err := strconv.ParseInt(text, 10, 64)
		if err != nil {
			return nil, errors.New("must be a whole number")
		}
		return json.RawMessage(strconv.FormatInt(n, 10)), nil
	case "number":
		n, err := strconv.ParseFloat(text, 64)
		if err != nil {
			return nil, errors.New("must be a number")
		}
		return json.RawMessage(strconv.FormatFloat(n, 'f', -1, 64)), nil
	case "":
		if !json.Valid([]byte(text)) {
			return nil, errors.New("must be JSON")
		}
		var buf bytes.Buffer
		_ = json.Compact(&buf, []byte(text))
		return buf.Bytes(), nil
	}
	return json.Marshal(text)
}

// violations lists the schema's objections one per line.
func violations(err error) []string {
	var ae *tools.ArgsError
	if !errors.As(err, &ae) {
		return []string{err.Error()}
	}
	var out []string
	for _, v := range ae.Violations {
		if v.Field != "" {
			out = append(out, v.Field+": "+v.Hint)
		} else {
			out = append(out, v.Hint)
		}
	}
	return out
}

// stateRows lines up what a write's before and after reads saw, field by
// field.
func stateRows(sr *apitype.StateReads) []diffRow {
	var before, after json.RawMessage
	if sr.Before != nil {
		before = sr.Before.State
	}
	if sr.After != nil {
		after = sr.After.State
	}
	return diff(before, after, nil)
}

// diff lines up two JSON objects' members by name: the frozen and the
// edited arguments, each money field with its amount, or a record before
// and after a write.
func diff(before, after json.RawMessage, money map[string]tools.Currency) []diffRow {
	var b, a map[string]json.RawMessage
	_ = json.Unmarshal(before, &b)
	_ = json.Unmarshal(after, &a)
	names := slices.Sorted(maps.Keys(b))
	for k := range a {
		if _, ok := b[k]; !ok {
			names = append(names, k)
		}
	}
	var rows []diffRow
	for _, k := range names {
		row := diffRow{Name: k}
		if raw, ok := b[k]; ok {
			row.Before = valueOf(raw, money, k)
		}
		if raw, ok := a[k]; ok {
			row.After = valueOf(raw, money, k)
		}
		row.Changed = !jsonEqual(b[k], a[k])
		rows = append(rows, row)
	}
	return rows
}

func jsonEqual(x, y json.RawMessage) bool {
	var a, b any
	if json.Unmarshal(x, &a) != nil || json.Unmarshal(y, &b) != nil {
		return bytes.Equal(x, y)
	}
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return bytes.Equal(ja, jb)
}
