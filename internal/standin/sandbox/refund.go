package sandbox

import (
	"regexp"
	"strings"
)

var currencyCode = regexp.MustCompile(`^[a-z]{3}$`)

const maxReason = 500

// Refund is money paid back to a tenant; cancelling it reverses the payment.
type Refund struct {
	Meta
	TenantID    string  `json:"tenant_id"`
	AmountCents int64   `json:"amount_cents"`
	Currency    string  `json:"currency"`
	Reason      string  `json:"reason"`
	ExternalRef *string `json:"external_ref"`
}

func (r *Refund) meta() *Meta { return &r.Meta }

type refundParams struct {
	TenantID    string  `json:"tenant_id"`
	AmountCents *int64  `json:"amount_cents"`
	Currency    string  `json:"currency"`
	Reason      string  `json:"reason"`
	ExternalRef *string `json:"external_ref"`
}

func (s *Server) refundKind() kind[Refund] {
	return kind[Refund]{
		object: "refund",
		prefix: "re",
		path:   "/v1/refunds",
		status: "succeeded",
		build:  s.buildRefund,
		filters: map[string]func(*Refund) string{
			"tenant_id":    func(r *Refund) string { return r.TenantID },
			"external_ref": func(r *Refund) string { return deref(r.ExternalRef) },
			"status":       func(r *Refund) string { return r.Status },
		},
	}
}

func (s *Server) buildRefund(body []byte) (Refund, *apiError) {
	var p refundParams
	if apiErr := decodeParams(body, &p); apiErr != nil {
		return Refund{}, apiErr
	}
	// Currencies are stored lowercase, as Stripe does, whatever the input.
	// This back office bills in dollars, so an omitted currency means USD.
	p.Currency = strings.ToLower(p.Currency)
	if p.Currency == "" {
		p.Currency = "usd"
	}
	if apiErr := firstError(
		s.tenants.checkActive(p.TenantID),
		checkAmount(p.AmountCents),
		checkCurrency(p.Currency),
		requireString("reason", p.Reason, maxReason),
		checkExternalRef(p.ExternalRef),
	); apiErr != nil {
		return Refund{}, apiErr
	}
	return Refund{
		TenantID:    p.TenantID,
		AmountCents: *p.AmountCents,
		Currency:    p.Currency,
		Reason:      p.Reason,
		ExternalRef: p.ExternalRef,
	}, nil
}

func checkAmount(amount *int64) *apiError {
	switch {
	case amount == nil:
		return missingParam("amount_cents")
	case *amount <= 0:
		return invalidParam("amount_cents", "Invalid amount_cents: must be a positive integer.")
	}
	return nil
}

func checkCurrency(currency string) *apiError {
	switch {
	case currency == "":
		return missingParam("currency")
	case !currencyCode.MatchString(currency):
		return invalidParam("currency", "Invalid currency: %s. Must be a three-letter ISO code.", currency)
	}
	return nil
}
