package server

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/tools"
)

// ProviderSetting is one provider setting a catalog needs: the environment
// variable that sets it and the tools that cannot run without it.
type ProviderSetting struct {
	// Env is the environment variable, e.g. TWILIO_AUTH_TOKEN.
	Env string
	// Tools are the catalog's tools that need it, sorted.
	Tools []string
	// value reads the setting from a configuration.
	value func(Providers) string
}

// Twilio's and SES's settings, in the order they are reported. SES
// credentials are not among them: without static keys, SES uses the AWS
// default credential chain (an instance or task role).
var (
	twilioSettings = []ProviderSetting{
		{Env: "TWILIO_ACCOUNT_SID", value: func(p Providers) string { return p.Twilio.AccountSID }},
		{Env: "TWILIO_AUTH_TOKEN", value: func(p Providers) string { return p.Twilio.AuthToken }},
		{Env: "TWILIO_FROM", value: func(p Providers) string { return p.Twilio.From }},
	}
	// SES_REGION has no default outside dev mode: a sender identity is
	// verified in one region, and sending from another fails every call.
	sesSettings = []ProviderSetting{
		{Env: "SES_REGION", value: func(p Providers) string { return p.SES.Region }},
		{Env: "SES_FROM", value: func(p Providers) string { return p.SES.From }},
	}
)

// httpServiceEnv is the variable that holds an HTTP service's base URL.
func httpServiceEnv(service string) string {
	return "MAESTRO_HTTP_SERVICE_" + strings.ToUpper(service) + "_URL"
}

// RequiredProviderSettings lists the provider settings the catalog's tools
// need, and only those: a catalog that never texts needs no Twilio
// account, one that never emails no SES sender, and a page needs both.
// Each HTTP service the catalog names needs its base URL.
func RequiredProviderSettings(cat *tools.Catalog) []ProviderSetting {
	var twilio, ses []string
	http := map[string][]string{}
	for _, t := range cat.Tools() {
		switch t.Connector.Kind {
		case maestrotype.KindTwilioSMS:
			twilio = append(twilio, t.Name)
		case maestrotype.KindSESEmail:
			ses = append(ses, t.Name)
		case maestrotype.KindPage:
			twilio = append(twilio, t.Name)
			ses = append(ses, t.Name)
		case maestrotype.KindHTTP:
			if name := t.Connector.HTTPService(); name != "" {
				http[name] = append(http[name], t.Name)
			}
		}
	}
	var out []ProviderSetting
	add := func(settings []ProviderSetting, users []string) {
		if len(users) == 0 {
			return
		}
		slices.Sort(users)
		for _, s := range settings {
			s.Tools = slices.Clone(users)
			out = append(out, s)
		}
	}
	add(twilioSettings, twilio)
	add(sesSettings, ses)
	for _, name := range slices.Sorted(maps.Keys(http)) {
		add([]ProviderSetting{{
			Env:   httpServiceEnv(name),
			value: func(p Providers) string { return p.HTTP[name].BaseURL },
		}}, http[name])
	}
	return out
}

// checkProviders refuses a configuration that lacks a setting the
// catalog's tools need. Left to run, every call of such a tool would fail,
// and the agent would be told of a failure it did not cause and cannot fix.
func checkProviders(cat *tools.Catalog, p Providers) error {
	var errs []error
	for _, s := range RequiredProviderSettings(cat) {
		if s.value(p) == "" {
			errs = append(errs, fmt.Errorf("%s is not set, and the catalog's tools %s need it", s.Env, strings.Join(s.Tools, ", ")))
		}
	}
	return errors.Join(errs...)
}
