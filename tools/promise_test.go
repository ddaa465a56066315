package tools_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/tools"
)

func TestPromisesDelivery(t *testing.T) {
	t.Parallel()
	cases := []struct {
		text string
		want bool
	}{
		// Claims that something happened.
		{"I've sent the text.", true},
		{"Done!", true},
		{"I texted the manager.", true},
		{"Your message has been passed on to the team.", true},
		{"Your message has been delivered.", true},
		{"It's been taken care of.", true},
		{"The work order was created.", true},
		{"I've paged the on-call manager.", true},
		{"Transferring you now; I've transferred the call.", true},
		{"Your refund is issued.", true},
		{"I've e-mailed the team.", true},
		{"We've scheduled a technician for Tuesday.", true},
		{"You're all set.", true},
		{"Your request is on its way.", true},
		{"I've notified maintenance and they're coming.", true},
		{"It notifies the team.", true},
		{"I’ve forwarded it.", true},
		{"I couldn't call, but I emailed them.", true},
		{"I'll check, and I've already sent it.", true},
		{"I've opened a ticket.", true},
		{"A ticket was opened for you.", true},
		// Future, neutral, conditional or negated.
		{"I'll make sure the team gets your message.", false},
		{"I couldn't send the text.", false},
		{"The text was not sent.", false},
		{"Nothing was sent.", false},
		{"I haven't been able to reach anyone.", false},
		{"Your message will be delivered after the call.", false},
		{"A manager needs to approve it before it is sent.", false},
		{"Once it's approved, I'll send it.", false},
		{"I've asked a manager to approve that text.", false},
		{"I'm paging the on-call manager now.", false},
		{"I'll open a ticket for the team.", false},
		{"Call when you need the tenant's name, unit or balance.", false},
		{"Call when the caller asks you to text them.", false},
		{"Here is what I found for tenant {{.Args.tenant_id}}.", false},
		{"Twilio reports it {{.Receipt.Status}}.", false},
		{"", false},
	}
	for _, tc := range cases {
		require.Equal(t, tc.want, tools.PromisesDelivery(tc.text), "%q", tc.text)
	}
}

func TestClaimsDelivery(t *testing.T) {
	t.Parallel()
	cases := []struct {
		text string
		want bool
	}{
		{"Your message has been delivered.", true},
		{"They've received the text.", true},
		{"The email arrived.", true},
		{"The page reached the on-call manager.", true},
		{"I've sent the text; Twilio reports it {{.Receipt.Status}}.", false},
		{"I've emailed your property manager (reference {{.Receipt.Fields.message_id}}).", false},
		{"It will be delivered in a moment.", false},
		{"Once it's delivered they'll see it.", false},
		{"It wasn't delivered.", false},
		{"I couldn't deliver the message to the office.", false},
		{"", false},
	}
	for _, tc := range cases {
		require.Equal(t, tc.want, tools.ClaimsDelivery(tc.text), "%q", tc.text)
	}
}
