package server

import (
	"errors"
	"fmt"
	"net/url"

	"github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/tools"
)

// checkNotifyWebhooks refuses to start with a webhook channel that could
// not be sent: its signing secret missing from the environment, or plain
// http outside dev mode. Naming the variable here beats a notify_failed on
// every request.
func checkNotifyWebhooks(cfg CoreConfig) error {
	var errs []error
	for _, env := range cfg.Catalog.WebhookSecrets() {
		if cfg.Getenv(env) == "" {
			errs = append(errs, fmt.Errorf("notify webhook secret_env: environment variable %s is not set or empty", env))
		}
	}
	if !cfg.LoopbackCallbacks {
		for _, u := range webhookURLs(cfg.Catalog) {
			if pu, err := url.Parse(u); err == nil && pu.Scheme != "https" {
				errs = append(errs, fmt.Errorf("notify webhook %q: plain http is allowed only in dev mode; use https", u))
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("service: approvers cannot be notified: %w", err)
	}
	return nil
}

func webhookURLs(c *tools.Catalog) []string {
	var out []string
	add := func(chans []tools.Channel) {
		for _, ch := range chans {
			if ch.Kind == tools.ChannelWebhook {
				out = append(out, ch.To)
			}
		}
	}
	for _, o := range c.Operators() {
		add(o.Notify)
	}
	for _, r := range c.Roles() {
		add(r.Notify)
		add(r.EscalateNotify)
	}
	return out
}

// notifyKinds lists the connector kinds the catalog's notification
// channels send through, so their providers get credentials.
func notifyKinds(c *tools.Catalog) []maestrotype.ConnectorKind {
	var kinds []maestrotype.ConnectorKind
	chans := c.NotifyChannels()
	if chans[tools.ChannelSMS] {
		kinds = append(kinds, maestrotype.KindTwilioSMS)
	}
	if chans[tools.ChannelEmail] {
		kinds = append(kinds, maestrotype.KindSESEmail)
	}
	return kinds
}
