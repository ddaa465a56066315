package tools

import (
	"fmt"
	"strings"
	"time"
)

// The postcall section of the file format.
type (
	postCallFile struct {
		Agent      string         `yaml:"agent"`
		Deliveries []deliveryFile `yaml:"deliveries"`
		Rules      []ruleFile     `yaml:"rules"`
		Urgent     *urgentFile    `yaml:"urgent"`
	}
	deliveryFile struct {
		From      string            `yaml:"from"`
		Tool      string            `yaml:"tool"`
		Args      map[string]string `yaml:"args"`
		Deadline  string            `yaml:"deadline"`
		Fallbacks []fallbackFile    `yaml:"fallbacks"`
	}
	fallbackFile struct {
		Tool     string            `yaml:"tool"`
		Args     map[string]string `yaml:"args"`
		Deadline string            `yaml:"deadline"`
	}
	urgentFile struct {
		Any      []string `yaml:"any"`
		Deadline string   `yaml:"deadline"`
	}
	ruleFile struct {
		Name    string            `yaml:"name"`
		Speaker string            `yaml:"speaker"`
		Any     []string          `yaml:"any"`
		Tool    string            `yaml:"tool"`
		Args    map[string]string `yaml:"args"`
		Urgent  bool              `yaml:"urgent"`
	}
)

// buildPostCall turns the postcall section into a PostCall, parsing its
// templates and phrases; the rules about what it may name live in the
// validator.
func buildPostCall(p *problems, f postCallFile) *PostCall {
	pc := &PostCall{Agent: f.Agent}
	for i, df := range f.Deliveries {
		row := rowName("postcall.deliveries", i, df.From)
		d := Delivery{
			From:     df.From,
			Tool:     df.Tool,
			Args:     buildPostCallArgs(p, row, fmt.Sprintf("postcall.deliveries[%s]", df.From), df.Args),
			Deadline: deadline(p, row, "deadline", df.Deadline, DefaultDeliveryDeadline),
		}
		for j, ff := range df.Fallbacks {
			field := fmt.Sprintf("fallbacks[%d]", j)
			d.Fallbacks = append(d.Fallbacks, Fallback{
				Tool:     ff.Tool,
				Args:     buildPostCallArgs(p, row, fmt.Sprintf("postcall.deliveries[%s].%s", df.From, field), ff.Args),
				Deadline: deadline(p, row, field+".deadline", ff.Deadline, DefaultDeliveryDeadline),
			})
		}
		pc.Deliveries = append(pc.Deliveries, d)
	}
	if u := f.Urgent; u != nil {
		pc.Urgent = &Urgency{Any: u.Any, Deadline: deadline(p, "catalog", "postcall.urgent.deadline", u.Deadline, 0), phrases: phrasesRE(u.Any)}
	}
	for i, rf := range f.Rules {
		row := rowName("postcall.rules", i, rf.Name)
		pc.Rules = append(pc.Rules, Rule{
			Name:    rf.Name,
			Speaker: rf.Speaker,
			Any:     rf.Any,
			Tool:    rf.Tool,
			Args:    buildPostCallArgs(p, row, fmt.Sprintf("postcall.rules[%s]", rf.Name), rf.Args),
			Urgent:  rf.Urgent,
			phrases: phrasesRE(rf.Any),
		})
	}
	return pc
}

func buildPostCallArgs(p *problems, row, name string, src map[string]string) map[string]*Template {
	args := make(map[string]*Template, len(src))
	for arg, s := range src {
		field := "args." + arg
		if strings.TrimSpace(s) == "" {
			// It would always be left out; saying so keeps the row honest.
			p.add(row, field, "empty: leave the argument out instead")
			continue
		}
		if t := parseField(p, row, name, field, s); t != nil {
			args[arg] = t
		}
	}
	return args
}

// deadline parses a delivery deadline, or returns def when it is absent.
func deadline(p *problems, row, field, s string, def time.Duration) time.Duration {
	if s == "" {
		return def
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		p.add(row, field, "%q is not a positive duration (e.g. 15m, 24h)", s)
		return def
	}
	return d
}
