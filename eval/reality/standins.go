package reality

import (
	"github.com/maestro-run/maestro/internal/standin"
)

// Var is one environment variable a config's ${NAME} references read.
type Var struct {
	Name, Value string
}

// StandinVars describes running stand-ins in the variables the demo config
// reads, which are also the names maestro itself reads its providers from.
// A CI script points some of them elsewhere (Twilio through a validating
// proxy, SES at an independent emulator) and keeps the rest.
func StandinVars(s *standin.Set) []Var {
	tw, ses, http := s.TwilioConfig(), s.SESConfig(), s.HTTPServices()[standin.SandboxService]
	return []Var{
		{"TWILIO_BASE_URL", tw.BaseURL},
		{"TWILIO_ACCOUNT_SID", tw.AccountSID},
		{"TWILIO_AUTH_TOKEN", tw.AuthToken},
		{"TWILIO_FROM", tw.From},
		{"SES_ENDPOINT", ses.Endpoint},
		{"SES_STORE_URL", ses.Endpoint},
		{"SES_REGION", ses.Region},
		{"AWS_ACCESS_KEY_ID", ses.AccessKeyID},
		{"AWS_SECRET_ACCESS_KEY", ses.SecretAccessKey},
		{"SES_FROM", ses.From},
		{"MAESTRO_HTTP_SERVICE_SANDBOX_URL", http.BaseURL},
		{"MAESTRO_HTTP_SERVICE_SANDBOX_TOKEN", http.Token},
	}
}

// Lookup finds a variable by name, falling back to next (os.LookupEnv, say)
// for names vars does not hold.
func Lookup(vars []Var, next func(string) (string, bool)) func(string) (string, bool) {
	return func(name string) (string, bool) {
		for _, v := range vars {
			if v.Name == name {
				return v.Value, true
			}
		}
		if next == nil {
			return "", false
		}
		return next(name)
	}
}
