package tools

import (
	"fmt"
	"strings"
)

// The postcall section of the file format.
type (
	postCallFile struct {
		Agent      string         `yaml:"agent"`
		Deliveries []deliveryFile `yaml:"deliveries"`
		Rules      []ruleFile     `yaml:"rules"`
	}
	deliveryFile struct {
		From string            `yaml:"from"`
		Tool string            `yaml:"tool"`
		Args map[string]string `yaml:"args"`
	}
	ruleFile struct {
		Name    string            `yaml:"name"`
		Speaker string            `yaml:"speaker"`
		Any     []string          `yaml:"any"`
		Tool    string            `yaml:"tool"`
		Args    map[string]string `yaml:"args"`
	}
)

// buildPostCall turns the postcall section into a PostCall, parsing its
// templates and phrases; the rules about what it may name live in the
// validator.
func buildPostCall(p *problems, f postCallFile) *PostCall {
	pc := &PostCall{Agent: f.Agent}
	for i, df := range f.Deliveries {
		row := rowName("postcall.deliveries", i, df.From)
		pc.Deliveries = append(pc.Deliveries, Delivery{
			From: df.From,
			Tool: df.Tool,
			Args: buildPostCallArgs(p, row, fmt.Sprintf("postcall.deliveries[%s]", df.From), df.Args),
		})
	}
	for i, rf := range f.Rules {
		row := rowName("postcall.rules", i, rf.Name)
		pc.Rules = append(pc.Rules, Rule{
			Name:    rf.Name,
			Speaker: rf.Speaker,
			Any:     rf.Any,
			Tool:    rf.Tool,
			Args:    buildPostCallArgs(p, row, fmt.Sprintf("postcall.rules[%s]", rf.Name), rf.Args),
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
