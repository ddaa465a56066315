package server

// twilioAuthToken is the token status callbacks are verified with: that of
// the account maestro sends from, which in dev mode is the stand-in's, so
// its signed callbacks validate exactly as Twilio's would in production.
// Call it after connectors, which starts the stand-ins.
func (d *Server) twilioAuthToken() string {
	if d.standins != nil {
		return d.standins.TwilioConfig().AuthToken
	}
	return d.cfg.Providers.Twilio.AuthToken
}
