package tools

import (
	"github.com/maestro-run/maestro/approval/rule"

	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/maestro-run/maestro/maestrotype"
)

// FormatVersion is the catalog file format this package reads.
const FormatVersion = 1

// The file format. Unknown keys are refused, so a misspelt "aproval" is an
// error rather than a tool that silently lost its gate.
type (
	catalogFile struct {
		Version   int            `yaml:"version"`
		Agents    []agentFile    `yaml:"agents"`
		Operators []operatorFile `yaml:"operators"`
		// Roles set who is told when a request waits for a role, and
		// whom it escalates to: see notify.go.
		Roles    []roleFile    `yaml:"roles"`
		Tools    []toolFile    `yaml:"tools"`
		PostCall *postCallFile `yaml:"postcall"`
		// SessionFacts declares what a session's context may carry.
		SessionFacts []sessionFactFile `yaml:"session_facts"`
		// Permissions name the roles that may take each operator action
		// beside deciding approvals: see permissions.go. Optional: default
		// defaultPermissionRoles.
		Permissions map[string][]string `yaml:"permissions"`
	}
	agentFile struct {
		ID           string   `yaml:"id"`
		Description  string   `yaml:"description"`
		APIKeySHA256 string   `yaml:"api_key_sha256"`
		Allow        []string `yaml:"allow"`
		OnFailure    string   `yaml:"on_failure"`
		// CallbackURL receives the final observation of a call the agent
		// was told is pending; CallbackSecretEnv names the environment
		// variable holding its signing secret.
		CallbackURL       string `yaml:"callback_url"`
		CallbackSecretEnv string `yaml:"callback_secret_env"`
		// OnReject is halt or continue. Optional: default halt.
		OnReject string `yaml:"on_reject"`
		// WhileAwaitingApproval is strict or allow_writes. Optional:
		// default strict.
		WhileAwaitingApproval string `yaml:"while_awaiting_approval"`
		// Platform says which voice platform calls the agent's tools by
		// webhook: see platform.go.
		Platform *platformFile `yaml:"platform"`
		// MaxOpenApprovals and MaxLiveSessions cap what the agent may
		// hold open at once: see caps.go.
		MaxOpenApprovals *int `yaml:"max_open_approvals"`
		MaxLiveSessions  *int `yaml:"max_live_sessions"`
	}
	operatorFile struct {
		ID           string   `yaml:"id"`
		APIKeySHA256 string   `yaml:"api_key_sha256"`
		Roles        []string `yaml:"roles"`
		// Notify are the channels the operator is told at when a request
		// waits for one of their roles.
		Notify []channelFile `yaml:"notify"`
	}
	toolFile struct {
		Name          string    `yaml:"name"`
		Version       int       `yaml:"version"`
		Description   string    `yaml:"description"`
		Owner         string    `yaml:"owner"`
		Effect        string    `yaml:"effect"`
		Delivery      string    `yaml:"delivery"`
		Reversibility string    `yaml:"reversibility"`
		RiskTags      []string  `yaml:"risk_tags"`
		Repeatable    bool      `yaml:"repeatable"`
		OnUnknown     string    `yaml:"on_unknown"`
		InputSchema   yaml.Node `yaml:"input_schema"`
		// MoneyFields names the integer arguments that are amounts of
		// money, each with its ISO 4217 currency: see money.go.
		MoneyFields  map[string]string `yaml:"money_fields"`
		Connector    yaml.Node         `yaml:"connector"`
		Receipt      *receiptFile      `yaml:"receipt"`
		Approval     *approvalFile     `yaml:"approval"`
		Compensation *compensationFile `yaml:"compensation"`
		// Before and After declare the write's state reads: see StateRead.
		Before  *stateReadFile `yaml:"before"`
		After   *stateReadFile `yaml:"after"`
		Wording wordingFile    `yaml:"wording"`
		// SafetyNotice is appended to every wording short of full success.
		SafetyNotice string `yaml:"safety_notice"`
		// Canary and RequiresGreenCanary: see canary.go.
		Canary              *canaryFile `yaml:"canary"`
		RequiresGreenCanary bool        `yaml:"requires_green_canary"`
	}
	receiptFile struct {
		Fields []string `yaml:"fields"`
	}
	approvalFile struct {
		ApproverRole    string `yaml:"approver_role"`
		Timeout         string `yaml:"timeout"`
		OnTimeout       string `yaml:"on_timeout"`
		AutoApproveWhen string `yaml:"auto_approve_when"`
		// AutoApproveProvenance lists the fact provenances the rule may
		// rest on.
		AutoApproveProvenance []string `yaml:"auto_approve_provenance"`
		// NotifyFields names the arguments a notification shows (the
		// amount, the recipient).
		NotifyFields []string `yaml:"notify_fields"`
		// VouchRoles are roles beside approver_role whose holders' facts
		// the rule may rest on.
		VouchRoles []string `yaml:"vouch_roles"`
	}
	compensationFile struct {
		Tool    string            `yaml:"tool"`
		Version int               `yaml:"version"`
		Args    map[string]string `yaml:"args"`
	}
	wordingFile struct {
		Success string `yaml:"success"`
		Pending string `yaml:"pending"`
		Failure string `yaml:"failure"`
		// Partial is for composite tools: some parts went out.
		Partial string `yaml:"partial"`
	}
)

// LoadFile reads and loads a catalog file.
func LoadFile(path string) (*Catalog, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("error reading tool catalog: %w", err)
	}
	return Load(data)
}

// Load parses and validates a catalog. A catalog that breaks any rule is
// refused with every problem at once, each naming its row and field, so
// the author fixes the file in one pass.
func Load(data []byte) (*Catalog, error) {
	var f catalogFile
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, errors.New("error parsing tool catalog: the file is empty")
		}
		return nil, fmt.Errorf("error parsing tool catalog: %w", err)
	}
	if err := dec.Decode(new(yaml.Node)); !errors.Is(err, io.EOF) {
		return nil, errors.New("error parsing tool catalog: want a single YAML document")
	}

	c := &Catalog{hash: Hash(data), source: slices.Clone(data), tools: make(map[string]*Tool)}
	p := &problems{}
	if f.Version != FormatVersion {
		p.add("catalog", "version", "must be %d, got %d", FormatVersion, f.Version)
	}

	rows := make([]toolRow, 0, len(f.Tools))
	firstRow := make(map[string]string)
	for i, tf := range f.Tools {
		row := rowName("tools", i, tf.Name)
		t := buildTool(p, row, tf)
		rows = append(rows, toolRow{row: row, tool: t})
		if t.Name == "" {
			continue
		}
		if prev, dup := firstRow[t.Name]; dup {
			p.add(row, "name", "duplicate of %s", prev)
			continue
		}
		firstRow[t.Name] = row
		c.tools[t.Name] = t
		c.sorted = append(c.sorted, t)
	}
	for i, af := range f.Agents {
		c.agents = append(c.agents, buildAgent(p, rowName("agents", i, af.ID), af))
	}
	for i, of := range f.Operators {
		c.operators = append(c.operators, buildOperator(p, rowName("operators", i, of.ID), of))
	}
	for i, rf := range f.Roles {
		c.roles = append(c.roles, buildRole(p, rowName("roles", i, rf.Name), rf))
	}
	if f.PostCall != nil {
		c.postCall = buildPostCall(p, *f.PostCall)
	}
	c.permissions = buildPermissions(p, f.Permissions)
	for _, sf := range f.SessionFacts {
		c.sessionFacts = append(c.sessionFacts, SessionFact(sf))
	}

	v := &validator{p: p, c: c}
	v.sessionFacts()
	v.tools(rows)
	v.agents()
	v.platforms()
	v.platformSecretsApart()
	v.descriptions(rows)
	v.operators()
	v.roles()
	v.permissionsSection()
	v.uniqueKeys()
	v.postCall()
	if err := p.err(); err != nil {
		return nil, err
	}
	slices.SortFunc(c.sorted, func(a, b *Tool) int { return strings.Compare(a.Name, b.Name) })
	return c, nil
}

type toolRow struct {
	row  string
	tool *Tool
}

// rowName names a row the way an author finds it: by list position and,
// when it has one, by name.
func rowName(list string, i int, name string) string {
	if name == "" {
		return fmt.Sprintf("%s[%d]", list, i)
	}
	return fmt.Sprintf("%s[%d] %q", list, i, name)
}

// buildTool turns a row into a Tool, parsing what must parse. It reports
// parse problems and leaves the offending part empty; the rules about what
// a valid row looks like live in the validator.
func buildTool(p *problems, row string, tf toolFile) *Tool {
	t := &Tool{
		Name:          tf.Name,
		Version:       tf.Version,
		Description:   tf.Description,
		Owner:         tf.Owner,
		Effect:        maestrotype.Effect(tf.Effect),
		Delivery:      maestrotype.Delivery(tf.Delivery),
		Reversibility: maestrotype.Reversibility(tf.Reversibility),
		RiskTags:      tf.RiskTags,
		Repeatable:    tf.Repeatable,
		OnUnknown:     OnUnknown(tf.OnUnknown),

		RequiresGreenCanary: tf.RequiresGreenCanary,
	}
	if t.Version == 0 {
		t.Version = 1
	}
	t.InputSchema = buildSchema(p, row, &tf.InputSchema)
	t.MoneyFields = buildMoneyFields(p, row, tf.MoneyFields)
	t.Connector = buildConnector(p, row, tf.Name, &tf.Connector)
	t.Canary = buildCanary(p, row, tf.Name, tf.Canary)
	if tf.Receipt != nil {
		t.ReceiptFields = tf.Receipt.Fields
		if len(t.ReceiptFields) == 0 {
			p.add(row, "receipt.fields", "required when receipt is present")
		}
	}
	if tf.Approval != nil {
		t.Approval = buildApproval(p, row, *tf.Approval)
	}
	digest, err := rowDigest(contractOf(tf))
	if err != nil {
		p.add(row, "name", "%v", err)
	}
	t.rowDigest = digest
	if tf.Compensation != nil {
		t.Compensation = &Compensation{Tool: tf.Compensation.Tool, Version: tf.Compensation.Version, Args: make(map[string]*Template)}
		if t.Compensation.blockDigest, err = rowDigest(tf.Compensation); err != nil {
			p.add(row, "compensation", "%v", err)
		}
		for name, src := range tf.Compensation.Args {
			if tmpl := parseField(p, row, tf.Name, "compensation.args."+name, src); tmpl != nil {
				t.Compensation.Args[name] = tmpl
			}
		}
	}
	t.Before = buildStateRead(p, row, tf.Name, fieldBefore, tf.Before)
	t.After = buildStateRead(p, row, tf.Name, fieldAfter, tf.After)
	t.Wording = Wording{
		Success: parseField(p, row, tf.Name, "wording.success", tf.Wording.Success),
		Pending: parseField(p, row, tf.Name, "wording.pending", tf.Wording.Pending),
		Failure: parseField(p, row, tf.Name, "wording.failure", tf.Wording.Failure),
		Partial: parseField(p, row, tf.Name, "wording.partial", tf.Wording.Partial),

		SafetyNotice: parseField(p, row, tf.Name, "safety_notice", tf.SafetyNotice),
	}
	return t
}

// parseField parses one template field; an absent field yields nil.
func parseField(p *problems, row, tool, field, src string) *Template {
	if src == "" {
		return nil
	}
	t, err := ParseTemplate(tool+"/"+field, src)
	if err != nil {
		p.add(row, field, "%v", err)
		return nil
	}
	return t
}

func buildSchema(p *problems, row string, node *yaml.Node) *Schema {
	if node.IsZero() {
		p.add(row, "input_schema", "required: describe the arguments (use {type: object, additionalProperties: false} for none)")
		return nil
	}
	var doc any
	if err := node.Decode(&doc); err != nil {
		p.add(row, "input_schema", "%v", err)
		return nil
	}
	raw, err := json.Marshal(doc)
	if err != nil {
		p.add(row, "input_schema", "not representable as JSON: %v", err)
		return nil
	}
	s, err := CompileSchema(raw)
	if err != nil {
		p.add(row, "input_schema", "%v", err)
		return nil
	}
	return s
}

func buildConnector(p *problems, row, tool string, node *yaml.Node) Connector {
	var c Connector
	if node.IsZero() {
		p.add(row, "connector", "required: name the connector that performs the tool (kind: %s)", kindList())
		return c
	}
	if node.Kind != yaml.MappingNode {
		p.add(row, "connector", "must be a mapping with a kind")
		return c
	}
	values := make(map[string]*yaml.Node, len(node.Content)/2)
	var keys []string
	for i := 0; i+1 < len(node.Content); i += 2 {
		key := node.Content[i].Value
		keys = append(keys, key)
		values[key] = node.Content[i+1]
	}
	if k := values["kind"]; k != nil {
		c.Kind = maestrotype.ConnectorKind(k.Value)
	}
	spec, ok := kinds[c.Kind]
	switch {
	case c.Kind == "":
		p.add(row, "connector.kind", "required (%s)", kindList())
		return c
	case !ok:
		p.add(row, "connector.kind", "unknown kind %q (want %s)", c.Kind, kindList())
		return c
	}

	c.Settings = make(map[string]*Template)
	for _, key := range keys {
		field := "connector." + key
		v := values[key]
		switch {
		case key == "kind":
		case key == "body" && c.Kind == maestrotype.KindHTTP:
			var body map[string]string
			if err := v.Decode(&body); err != nil {
				p.add(row, field, "must map JSON body fields to templates: %v", err)
				continue
			}
			c.Body = make(map[string]*Template, len(body))
			for name, src := range body {
				if tmpl := parseField(p, row, tool, field+"."+name, src); tmpl != nil {
					c.Body[name] = tmpl
				}
			}
		case !slices.Contains(spec.required, key) && !slices.Contains(spec.optional, key):
			p.add(row, field, "not a %s setting (want %s)", c.Kind, settingList(spec))
		case v.Kind != yaml.ScalarNode:
			p.add(row, field, "must be a string")
		default:
			if tmpl := parseField(p, row, tool, field, v.Value); tmpl != nil {
				c.Settings[key] = tmpl
			}
		}
	}
	for _, name := range spec.required {
		if v := values[name]; v == nil || (v.Kind == yaml.ScalarNode && v.Value == "") {
			p.add(row, "connector."+name, "required by the %s connector", c.Kind)
		}
	}
	for _, name := range spec.static {
		if t := c.Settings[name]; t != nil && !t.literal() {
			p.add(row, "connector."+name, "must be a fixed value, not a template")
		}
	}
	if m := c.Settings["method"]; c.Kind == maestrotype.KindHTTP && m != nil && m.literal() && !slices.Contains(httpMethods, m.String()) {
		p.add(row, "connector.method", "unknown method %q (want %s)", m.String(), strings.Join(httpMethods, ", "))
	}
	return c
}

func kindList() string {
	names := make([]string, 0, len(kinds))
	for k := range kinds {
		names = append(names, string(k))
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

func settingList(spec kindSpec) string {
	names := slices.Concat(spec.required, spec.optional)
	if len(names) == 0 {
		return "no settings"
	}
	return strings.Join(names, ", ")
}

func buildApproval(p *problems, row string, af approvalFile) *Approval {
	a := &Approval{
		ApproverRole:    af.ApproverRole,
		OnTimeout:       OnTimeout(af.OnTimeout),
		AutoApproveWhen: strings.TrimSpace(af.AutoApproveWhen),
		NotifyFields:    af.NotifyFields,
		VouchRoles:      af.VouchRoles,
	}
	if af.Timeout != "" {
		d, err := time.ParseDuration(af.Timeout)
		if err != nil || d <= 0 {
			p.add(row, "approval.timeout", "%q is not a positive duration (e.g. 10m, 1h)", af.Timeout)
		}
		a.Timeout = d
	}
	if a.OnTimeout == "" && a.ApproverRole != "" {
		a.OnTimeout = OnTimeoutTimedOut
	}
	if a.AutoApproveWhen != "" {
		c, err := rule.Compile(a.AutoApproveWhen)
		if err != nil {
			p.add(row, "approval.auto_approve_when", "%v", err)
		}
		a.Condition = c
	}
	if af.AutoApproveProvenance != nil {
		if a.AutoApproveWhen == "" {
			p.add(row, "approval.auto_approve_provenance", "names the facts a rule may rest on, and there is no auto_approve_when rule")
		}
		if len(af.AutoApproveProvenance) == 0 {
			p.add(row, "approval.auto_approve_provenance", "is empty: leave it out to accept operator and platform-signed facts")
		}
		a.Provenance = []maestrotype.Provenance{}
		for i, s := range af.AutoApproveProvenance {
			pv, err := maestrotype.ParseProvenance(s)
			if err != nil {
				p.add(row, fmt.Sprintf("approval.auto_approve_provenance[%d]", i), "%v", err)
				continue
			}
			if pv.Operator() != "" {
				p.add(row, fmt.Sprintf("approval.auto_approve_provenance[%d]", i),
					"%q names one operator: list the kind %q, and name who may vouch with approver_role and vouch_roles", s, maestrotype.ProvenanceOperator)
				continue
			}
			a.Provenance = append(a.Provenance, pv)
		}
	}
	return a
}

func buildAgent(p *problems, row string, af agentFile) *Agent {
	a := &Agent{
		ID:                    af.ID,
		Description:           af.Description,
		OnFailure:             maestrotype.OnFailure(af.OnFailure),
		OnReject:              OnReject(af.OnReject),
		WhileAwaitingApproval: WhileAwaitingApproval(af.WhileAwaitingApproval),
		allow:                 slices.Compact(slices.Sorted(slices.Values(af.Allow))),
		Callback:              buildCallback(p, row, af),
		Platform:              buildPlatform(p, row, af),
		MaxOpenApprovals:      capOr(af.MaxOpenApprovals, DefaultMaxOpenApprovals),
		MaxLiveSessions:       capOr(af.MaxLiveSessions, DefaultMaxLiveSessions),
	}
	if a.OnFailure == "" {
		a.OnFailure = maestrotype.OnFailureNone
	}
	if a.OnReject == "" {
		a.OnReject = OnRejectHalt
	}
	if a.WhileAwaitingApproval == "" {
		a.WhileAwaitingApproval = AwaitingApprovalStrict
	}
	if af.APIKeySHA256 != "" {
		h, err := parseKeyHash(af.APIKeySHA256)
		if err != nil {
			p.add(row, "api_key_sha256", "%v", err)
		}
		a.key, a.hasKey = h, err == nil && !refuseWeakKey(p, row, h)
	}
	return a
}

func buildOperator(p *problems, row string, of operatorFile) *Operator {
	o := &Operator{ID: of.ID, Roles: of.Roles, Notify: buildChannels(p, row, "notify", of.Notify)}
	if of.APIKeySHA256 != "" {
		h, err := parseKeyHash(of.APIKeySHA256)
		if err != nil {
			p.add(row, "api_key_sha256", "%v", err)
		}
		o.key, o.hasKey = h, err == nil && !refuseWeakKey(p, row, h)
	}
	return o
}
