package activities

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/internal/ledger"
	"github.com/maestro-run/maestro/workflows"
)

// hostileSlack is what an agent would put in an argument to get a link
// and a ping into an approver's Slack channel ahead of the real link.
const hostileSlack = "<https://evil.example|Routine, click to approve> <!channel>"

// linkish finds what a phone, mail or chat client would make a link of:
// anything with a scheme, and bare domain names.
var linkish = regexp.MustCompile(`(?i)[a-z][a-z0-9+.-]*://[^\s<>|]+|\b[a-z0-9-]+(\.[a-z0-9-]+)*\.[a-z]{2,}\b`)

func hostileRequest(t *testing.T) ledger.ApprovalRequest {
	t.Helper()
	args, err := json.Marshal(map[string]any{
		"reason": hostileSlack,
		"note":   "ok\r\nBcc: x@evil.example\u202e\x07",
	})
	require.NoError(t, err)
	return ledger.ApprovalRequest{ID: "apr_123", Tool: "issue_refund", Args: args, Reason: "money: this call spends or commits funds"}
}

const decideURL = "https://maestro.example.com/console/approvals/apr_123"

// requireOnlyDecideLink: the one link a client finds is maestro's.
func requireOnlyDecideLink(t *testing.T, text string) {
	t.Helper()
	require.Equal(t, []string{decideURL}, linkish.FindAllString(text, -1), "%s", text)
	for _, r := range text {
		require.False(t, unicode.IsControl(r) || unicode.Is(unicode.Cf, r), "control or format character %U in %q", r, text)
	}
}

func TestSlackTextEscapesAgentTextSoTheDecideLinkIsTheOnlyLink(t *testing.T) {
	t.Parallel()
	n := notifyMessage(hostileRequest(t), nil, workflows.StageOpened, "https://maestro.example.com/")
	requireOnlyDecideLink(t, n.Text)
	require.NotContains(t, n.Text, "<", "no mrkdwn link or mention can open")
	require.NotContains(t, n.Text, ">")
	require.Contains(t, n.Text, "&lt;!channel&gt;", "the mention is shown as text")
	require.Contains(t, n.Text, "&lt;https[:]//evil[.]example|Routine, click to approve&gt;")
	require.True(t, strings.HasSuffix(n.Text, " Decide: "+decideURL))

	body, err := json.Marshal(n)
	require.NoError(t, err)
	var posted map[string]any
	require.NoError(t, json.Unmarshal(body, &posted))
	require.Equal(t, n.Text, posted["text"], "the webhook posts the escaped text")
	requireOnlyDecideLink(t, posted["summary"].(string)+" "+decideURL)
}

func TestEmailCarriesAgentTextAsPlainWordsWithOneLineSubject(t *testing.T) {
	t.Parallel()
	req := hostileRequest(t)
	req.Tool = "issue_refund\r\nBcc: victim@evil.example"
	for _, stage := range []string{workflows.StageOpened, workflows.StageEscalated} {
		n := notifyMessage(req, nil, stage, "https://maestro.example.com")
		body := n.plain()
		requireOnlyDecideLink(t, body)
		require.Contains(t, body, "<https[:]//evil[.]example|Routine, click to approve> <!channel>", "plain text keeps the words, minus the link")
		require.NotContains(t, body, "\u202e")
		require.NotContains(t, n.subject(), "\r")
		require.NotContains(t, n.subject(), "\n")
		require.Contains(t, n.subject(), "issue_refund Bcc:", "the would-be header stays in the subject line")
	}
}

func TestSMSIsBoundedStrippedAndKeepsTheDecideLink(t *testing.T) {
	t.Parallel()
	req := hostileRequest(t)
	n := notifyMessage(req, nil, workflows.StageOpened, "https://maestro.example.com")
	text := n.sms()
	requireOnlyDecideLink(t, text)
	require.LessOrEqual(t, len([]rune(text)), smsLimit)

	// A reason as long as a novel still leaves the link whole.
	req.Reason = strings.Repeat("refund because ", 100)
	n = notifyMessage(req, nil, workflows.StageOpened, "https://maestro.example.com")
	text = n.sms()
	require.True(t, strings.HasSuffix(text, " Decide: "+decideURL), "%s", text)

	// Without a public URL, the request is named instead, and nothing in
	// the message is a link.
	n = notifyMessage(hostileRequest(t), nil, workflows.StageOpened, "")
	require.Empty(t, linkish.FindAllString(n.sms(), -1), "%s", n.sms())
	require.Contains(t, n.sms(), "Request apr_123.")
}

func TestDefangLinksLeavesAmountsAndWordsAlone(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"amount=12.50, tenant_id=t_100": "amount=12.50, tenant_id=t_100",
		"see HTTPS://Evil.Example/x":    "see HTTPS[:]//Evil[.]Example/x",
		"mail bob@example.com. Thanks":  "mail bob@example[.]com. Thanks",
		"a.b.c":                         "a[.]b[.]c",
		"www.evil.example":              "www[.]evil[.]example",
	} {
		require.Equal(t, want, defangLinks(in), in)
	}
}
