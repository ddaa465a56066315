package twilio

import (
	"fmt"
	"net/url"
	"time"
)

// dayLayout is the date-only form Twilio documents for DateSent filters;
// twilio-go sends RFC 3339 instead, so both are accepted.
const dayLayout = "2006-01-02"

// Filter parameters in the order Twilio echoes them in page URIs.
var filterParams = []string{"To", "From", "DateSent", "DateSent<", "DateSent>"}

// listFilter selects messages for a list request.
type listFilter struct {
	to, from   string
	sentOn     *dateBound // DateSent: that day
	sentBefore *dateBound // DateSent<: on or before
	sentAfter  *dateBound // DateSent>: on or after
	echo       [][2]string
}

// dateBound is a DateSent value: a whole UTC day, or an instant.
type dateBound struct {
	t        time.Time
	wholeDay bool
}

func parseFilter(q url.Values) (listFilter, *apiError) {
	f := listFilter{to: q.Get("To"), from: q.Get("From")}
	bounds := map[string]**dateBound{
		"DateSent":  &f.sentOn,
		"DateSent<": &f.sentBefore,
		"DateSent>": &f.sentAfter,
	}
	for _, name := range filterParams {
		v := q.Get(name)
		if v == "" {
			continue
		}
		f.echo = append(f.echo, [2]string{name, v})
		dst, isDate := bounds[name]
		if !isDate {
			continue
		}
		b, err := parseDateBound(v)
		if err != nil {
			return listFilter{}, badRequest(codeInvalidParameter, "Invalid %s: %v", name, err)
		}
		*dst = &b
	}
	return f, nil
}

func parseDateBound(v string) (dateBound, error) {
	if t, err := time.Parse(dayLayout, v); err == nil {
		return dateBound{t: t, wholeDay: true}, nil
	}
	t, err := time.Parse(time.RFC3339, v)
	if err != nil {
		return dateBound{}, fmt.Errorf("expected YYYY-MM-DD or RFC 3339, got %q", v)
	}
	return dateBound{t: t}, nil
}

func (f listFilter) match(m *Message) bool {
	if f.to != "" && m.To != f.to {
		return false
	}
	if f.from != "" && m.From != f.from {
		return false
	}
	sent := m.sentAt().UTC()
	if f.sentOn != nil && !sameDay(sent, f.sentOn.t) {
		return false
	}
	if b := f.sentBefore; b != nil {
		limit := b.t
		if b.wholeDay {
			limit = b.t.Add(24*time.Hour - time.Nanosecond)
		}
		if sent.After(limit) {
			return false
		}
	}
	if b := f.sentAfter; b != nil && sent.Before(b.t) {
		return false
	}
	return true
}

func sameDay(a, b time.Time) bool {
	return a.UTC().Format(dayLayout) == b.UTC().Format(dayLayout)
}
