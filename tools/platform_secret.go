package tools

// platformSecretsApart refuses two agents whose platform blocks name one
// secret: a request is verified with the secret of the agent its URL
// names, so a request signed for one agent would be taken at the other's
// URL as that other agent, with its tools and its facts. The service
// checks the values it reads as well (two variables holding one secret).
func (v *validator) platformSecretsApart() {
	first := map[string]string{}
	for i, a := range v.c.agents {
		if a.Platform == nil || a.Platform.SecretEnv == "" {
			continue
		}
		env := a.Platform.SecretEnv
		if other, ok := first[env]; ok {
			v.p.add(rowName("agents", i, a.ID), "platform.secret_env",
				"%s is also agent %q's platform secret: agents %q and %q would accept each other's signed requests; give each agent its own secret",
				env, other, other, a.ID)
			continue
		}
		first[env] = a.ID
	}
}
