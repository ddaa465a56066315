package tools

import (
	"fmt"
	"net/mail"
	"net/url"
	"regexp"
	"slices"
	"time"
)

// ChannelKind is how an approver is told a request is waiting.
type ChannelKind string

const (
	// ChannelSMS texts a phone number through the Twilio connector.
	ChannelSMS ChannelKind = "sms"
	// ChannelEmail mails an address through the SES connector.
	ChannelEmail ChannelKind = "email"
	// ChannelWebhook posts signed JSON to a URL (a Slack incoming webhook,
	// a pager's inbound hook).
	ChannelWebhook ChannelKind = "webhook"
)

// Channel is one address an approver is told at.
type Channel struct {
	Kind ChannelKind
	// To is the phone number (E.164), the email address or the webhook URL.
	To string
	// SecretEnv names the environment variable holding a webhook's signing
	// secret; empty for the other kinds.
	SecretEnv string
}

// Role is a role's notification policy: who besides its operators is told
// when a request waits for it, and who is told when nobody decided in time.
type Role struct {
	Name string
	// Notify are the role's own channels (a team inbox, a channel's
	// webhook), told along with its operators'.
	Notify []Channel
	// EscalateAfter is how long a request may stay undecided before the
	// escalation list is told; zero when the role does not escalate.
	EscalateAfter time.Duration
	// EscalateOperators are told, on their own channels, at escalation.
	EscalateOperators []string
	// EscalateNotify are further channels told at escalation.
	EscalateNotify []Channel
}

// NotifyStage says which list a notification went to.
type NotifyStage string

const (
	// StageOpened: the request opened; the role's operators are told.
	StageOpened NotifyStage = "opened"
	// StageEscalated: the request was still undecided at the role's
	// escalation time; the escalation list is told.
	StageEscalated NotifyStage = "escalated"
)

// Recipient is one channel of one principal at one stage. Who and Index
// name it without the address, so the address can change in the catalog
// without a notification already sent being sent again.
type Recipient struct {
	// Who is "operator:<id>" or "role:<name>".
	Who     string
	Channel Channel
	// Index tells two channels of one kind of one principal apart.
	Index int
}

// Key names the recipient within a stage: who, channel kind and index.
func (r Recipient) Key() string {
	return fmt.Sprintf("%s:%s:%d", r.Who, r.Channel.Kind, r.Index)
}

// Role returns the named role's notification policy.
func (c *Catalog) Role(name string) (*Role, bool) {
	i := slices.IndexFunc(c.roles, func(r *Role) bool { return r.Name == name })
	if i < 0 {
		return nil, false
	}
	return c.roles[i], true
}

// Roles returns every role with a notification policy, in file order.
func (c *Catalog) Roles() []*Role {
	return slices.Clone(c.roles)
}

// Notifies reports whether a request for role tells anyone: an operator
// holding it, or the role itself, has a channel.
func (c *Catalog) Notifies(role string) bool {
	return len(c.Recipients(role, StageOpened)) > 0
}

// Recipients lists who is told at stage of a request waiting for role:
// when it opens, every operator holding the role on each of their
// channels and the role's own channels; at escalation, the escalation
// operators' channels and the escalation channels.
func (c *Catalog) Recipients(role string, stage NotifyStage) []Recipient {
	r, _ := c.Role(role)
	var out []Recipient
	addOperator := func(o *Operator) {
		out = append(out, recipients("operator:"+o.ID, o.Notify)...)
	}
	switch stage {
	case StageOpened:
		for _, o := range c.operators {
			if o.HasRole(role) {
				addOperator(o)
			}
		}
		if r != nil {
			out = append(out, recipients("role:"+r.Name, r.Notify)...)
		}
	case StageEscalated:
		if r == nil {
			return nil
		}
		for _, id := range r.EscalateOperators {
			if o, ok := c.Operator(id); ok {
				addOperator(o)
			}
		}
		out = append(out, recipients("role:"+r.Name+":escalation", r.EscalateNotify)...)
	}
	return out
}

// Recipient finds a recipient of stage by its key, as the catalog has it
// now.
func (c *Catalog) Recipient(role string, stage NotifyStage, key string) (Recipient, bool) {
	for _, r := range c.Recipients(role, stage) {
		if r.Key() == key {
			return r, true
		}
	}
	return Recipient{}, false
}

func recipients(who string, chans []Channel) []Recipient {
	out := make([]Recipient, 0, len(chans))
	seen := map[ChannelKind]int{}
	for _, ch := range chans {
		out = append(out, Recipient{Who: who, Channel: ch, Index: seen[ch.Kind]})
		seen[ch.Kind]++
	}
	return out
}

// The file format of notification channels and role policies.
type (
	channelFile struct {
		Channel   string `yaml:"channel"`
		To        string `yaml:"to"`
		SecretEnv string `yaml:"secret_env"`
	}
	roleFile struct {
		Name          string          `yaml:"name"`
		Notify        []channelFile   `yaml:"notify"`
		EscalateAfter string          `yaml:"escalate_after"`
		EscalateTo    *escalationFile `yaml:"escalate_to"`
	}
	escalationFile struct {
		Operators []string      `yaml:"operators"`
		Notify    []channelFile `yaml:"notify"`
	}
)

// e164 is a phone number as Twilio takes it.
var e164 = regexp.MustCompile(`^\+[1-9][0-9]{6,14}$`)

func buildChannels(p *problems, row, field string, files []channelFile) []Channel {
	out := make([]Channel, 0, len(files))
	for i, cf := range files {
		f := fmt.Sprintf("%s[%d]", field, i)
		ch := Channel{Kind: ChannelKind(cf.Channel), To: cf.To, SecretEnv: cf.SecretEnv}
		switch ch.Kind {
		case ChannelSMS:
			if !e164.MatchString(ch.To) {
				p.add(row, f+".to", "want the phone number to text in E.164 form (+15551234567), got %q", ch.To)
			}
		case ChannelEmail:
			if a, err := mail.ParseAddress(ch.To); err != nil || a.Address != ch.To {
				p.add(row, f+".to", "want an email address (approvals@example.com), got %q", ch.To)
			}
		case ChannelWebhook:
			u, err := url.Parse(ch.To)
			if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
				p.add(row, f+".to", "want the absolute http(s) URL to post to, got %q", ch.To)
			} else if u.Scheme == "http" && !isLoopback(u.Hostname()) {
				p.add(row, f+".to", "plain http is allowed only to a loopback host; use https")
			}
			switch {
			case ch.SecretEnv == "":
				p.add(row, f+".secret_env", "required: name the environment variable holding the webhook's signing secret")
			case !envName.MatchString(ch.SecretEnv):
				p.add(row, f+".secret_env", "want an environment variable name, got %q", ch.SecretEnv)
			}
		case "":
			p.add(row, f+".channel", "required: sms, email or webhook")
		default:
			p.add(row, f+".channel", "unknown channel %q: want sms, email or webhook", cf.Channel)
		}
		if ch.Kind != ChannelWebhook && ch.SecretEnv != "" {
			p.add(row, f+".secret_env", "only a webhook channel is signed")
		}
		out = append(out, ch)
	}
	return out
}

func buildRole(p *problems, row string, rf roleFile) *Role {
	r := &Role{Name: rf.Name, Notify: buildChannels(p, row, "notify", rf.Notify)}
	if rf.EscalateAfter != "" {
		d, err := time.ParseDuration(rf.EscalateAfter)
		if err != nil || d <= 0 {
			p.add(row, "escalate_after", "%q is not a positive duration (e.g. 5m)", rf.EscalateAfter)
		}
		r.EscalateAfter = d
	}
	if rf.EscalateTo != nil {
		r.EscalateOperators = rf.EscalateTo.Operators
		r.EscalateNotify = buildChannels(p, row, "escalate_to.notify", rf.EscalateTo.Notify)
	}
	return r
}

// roles checks the role policies against the operators and tools they
// name.
func (v *validator) roles() {
	p := v.p
	known := map[string]bool{}
	for _, o := range v.c.operators {
		for _, r := range o.Roles {
			known[r] = true
		}
	}
	for _, t := range v.c.sorted {
		if t.Approval != nil && t.Approval.ApproverRole != "" {
			known[t.Approval.ApproverRole] = true
		}
	}
	seen := map[string]bool{}
	for i, r := range v.c.roles {
		row := rowName("roles", i, r.Name)
		switch {
		case r.Name == "":
			p.add(row, "name", "required")
		case seen[r.Name]:
			p.add(row, "name", "duplicate role %q", r.Name)
		case !known[r.Name]:
			p.add(row, "name", "no operator holds role %q and no tool's approval names it", r.Name)
		}
		seen[r.Name] = true
		escalates := len(r.EscalateOperators) > 0 || len(r.EscalateNotify) > 0
		switch {
		case r.EscalateAfter > 0 && !escalates:
			p.add(row, "escalate_to", "required with escalate_after: name the operators or channels told when a request is still undecided")
		case r.EscalateAfter == 0 && escalates && !p.already(row, "escalate_after"):
			p.add(row, "escalate_after", "required with escalate_to: how long a request may wait before escalating (e.g. 5m)")
		}
		for j, id := range r.EscalateOperators {
			f := fmt.Sprintf("escalate_to.operators[%d]", j)
			o, ok := v.c.Operator(id)
			switch {
			case !ok:
				p.add(row, f, "unknown operator %q", id)
			case len(o.Notify) == 0:
				p.add(row, f, "operator %q has no notify channels, so escalating to them tells nobody", id)
			}
		}
	}
}

// notifyFields checks that a gated tool's notify_fields name arguments its
// schema declares.
func (v *validator) notifyFields(row string, t *Tool) {
	if t.Approval == nil || len(t.Approval.NotifyFields) == 0 {
		return
	}
	var props []string
	if t.InputSchema != nil {
		props = t.InputSchema.properties()
	}
	for i, f := range t.Approval.NotifyFields {
		if !slices.Contains(props, f) {
			v.p.add(row, fmt.Sprintf("approval.notify_fields[%d]", i), "%q is not an argument of the tool's input_schema", f)
		}
	}
}

// WebhookSecrets lists the environment variables the catalog's webhook
// channels are signed with, each once, in file order.
func (c *Catalog) WebhookSecrets() []string {
	var out []string
	add := func(chans []Channel) {
		for _, ch := range chans {
			if ch.Kind == ChannelWebhook && !slices.Contains(out, ch.SecretEnv) {
				out = append(out, ch.SecretEnv)
			}
		}
	}
	for _, o := range c.operators {
		add(o.Notify)
	}
	for _, r := range c.roles {
		add(r.Notify)
		add(r.EscalateNotify)
	}
	return out
}

// NotifyChannels reports which channel kinds the catalog notifies on, so
// the service builds the connectors they need.
func (c *Catalog) NotifyChannels() map[ChannelKind]bool {
	out := map[ChannelKind]bool{}
	add := func(chans []Channel) {
		for _, ch := range chans {
			out[ch.Kind] = true
		}
	}
	for _, o := range c.operators {
		add(o.Notify)
	}
	for _, r := range c.roles {
		add(r.Notify)
		add(r.EscalateNotify)
	}
	return out
}
