package server_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/tools"
)

// screenshotDir is where the browser tests leave each page at phone and
// desktop width, for people to look at.
var screenshotDir = filepath.Join("..", "..", "results", "console")

// browser starts a headless Chromium for one test. Without one the test
// is skipped on a workstation and fails in CI, which installs it.
func browser(t *testing.T) context.Context {
	t.Helper()
	path := ""
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			path = p
			break
		}
	}
	if path == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("the console's browser tests need Chromium: apt-get install -y chromium")
		}
		t.Skip("no Chromium on this machine: apt-get install -y chromium")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path), chromedp.NoSandbox,
		chromedp.Flag("disable-dev-shm-usage", true))
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(alloc)
	t.Cleanup(func() {
		cancel()
		cancelAlloc()
	})
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate("about:blank")))
	return ctx
}

// widths are the viewports each page is photographed at.
var widths = []struct {
	name          string
	width, height int64
}{{"phone", 390, 844}, {"desktop", 1280, 900}}

// shoot saves the current page at each width, then leaves the desktop
// width in place.
func shoot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(screenshotDir, 0o755))
	for _, w := range widths {
		require.NoError(t, chromedp.Do(ctx, chromedp.EmulateViewport(w.width, w.height)))
		png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(screenshotDir, name+"-"+w.name+".png"), png, 0o644))
	}
}

// browserSignIn signs in through the sign-in page.
func browserSignIn(t *testing.T, ctx context.Context, base, key string, shot string) {
	t.Helper()
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(base+"/console/approvals"),
		chromedp.WaitVisible(chromedp.CSS("#key")),
	))
	if shot != "" {
		shoot(t, ctx, shot)
	}
	require.NoError(t, chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.CSS("#key"), key),
		chromedp.Submit(chromedp.CSS("#key")),
		chromedp.WaitVisible(chromedp.CSS("#queue")),
	))
}

func text(t *testing.T, ctx context.Context, css string) string {
	t.Helper()
	s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(css)))
	require.NoError(t, err)
	return strings.Join(strings.Fields(s), " ")
}

func TestConsoleBrowserManagerModifiesARefund(t *testing.T) {
	t.Parallel()
	e := setup(t)
	ctx := browser(t)
	sms, err := e.invoke("send_sms", e.key("sms"), `{"to":"+14155550100","body":"Your refund request is with a manager"}`)
	require.NoError(t, err)
	require.Equal(t, "succeeded", string(sms.State))
	pending := e.requestRefund("refund")

	browserSignIn(t, ctx, e.url, tools.DemoOpsKey, "signin")
	card := `[data-approval="` + pending.ApprovalID + `"]`
	require.NoError(t, chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(card))))
	require.Contains(t, text(t, ctx, card), "issue_refund")
	require.Contains(t, text(t, ctx, card), "amount_cents $25.00 (raw 2500)")
	shoot(t, ctx, "queue")

	require.NoError(t, chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(card+" a.button")),
		chromedp.WaitVisible(chromedp.CSS("#decide")),
	))
	require.Contains(t, text(t, ctx, "table.args"), "amount_cents $25.00 (raw 2500)")
	calls := text(t, ctx, "#calls + p + table, section[aria-labelledby=calls] table")
	require.Contains(t, calls, "send_sms")
	require.Contains(t, calls, "succeeded")
	require.Contains(t, text(t, ctx, "section[aria-labelledby=facts]"), "agent-declared")
	shoot(t, ctx, "approval")

	require.NoError(t, chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`a[href$="/modify"]`)),
		chromedp.WaitVisible(chromedp.CSS("#arg-amount_cents")),
		chromedp.SetValue(chromedp.CSS("#arg-amount_cents"), ""),
		chromedp.SendKeys(chromedp.CSS("#arg-amount_cents"), "1500"),
		chromedp.SendKeys(chromedp.CSS("#modify-reason"), "half was already refunded by cheque"),
	))
	shoot(t, ctx, "modify")
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Submit(chromedp.CSS("#arg-amount_cents")),
		chromedp.WaitVisible(chromedp.CSS("table.diff")),
	))
	require.Contains(t, text(t, ctx, "table.diff tr.changed"), "amount_cents changed $25.00 (raw 2500) $15.00 (raw 1500)")
	require.Equal(t, "pending", e.approvalStatus(pending.ApprovalID), "nothing is decided before the confirmation")
	shoot(t, ctx, "diff")

	require.NoError(t, chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS("button.approve")),
		chromedp.WaitVisible(chromedp.CSS("p.notice")),
	))
	require.Contains(t, text(t, ctx, "p.notice"), "Approved with your changes")
	shoot(t, ctx, "approval-decided")

	done, err := e.agent.Wait(e.ctx, pending.InvocationID)
	require.NoError(t, err)
	require.Equal(t, "succeeded", string(done.State))
	require.NotNil(t, done.Observation.Receipt)
	// Read back from the back office itself, not from the ledger.
	refund, err := e.standins.Reader().HTTPResource(e.ctx, e.standins.SandboxURL(), e.standins.Sandbox.Token(), "/v1/refunds/"+done.Observation.Receipt.ID)
	require.NoError(t, err)
	require.EqualValues(t, 1500, refund.Detail["amount_cents"])
	require.Equal(t, 1, e.standins.Sandbox.CountRefunds())

	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(e.url+"/console/sessions/"+e.session),
		chromedp.WaitVisible(chromedp.CSS("#undo")),
	))
	require.Contains(t, text(t, ctx, "ol.calls"), "issue_refund")
	require.Contains(t, text(t, ctx, "section[aria-labelledby=undo]"), "undo available: cancel_refund")
	shoot(t, ctx, "session")
	for _, page := range []string{"reconciliations", "audit", "sessions", "canary"} {
		require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(e.url+"/console/"+page), chromedp.WaitVisible(chromedp.CSS("main h1"))))
		shoot(t, ctx, page)
	}
}

func TestConsoleBrowserOpsOnlyOperatorCannotApprove(t *testing.T) {
	t.Parallel()
	e := setup(t, withClerk)
	ctx := browser(t)
	pending := e.requestRefund("refund")

	browserSignIn(t, ctx, e.url, clerkKey, "")
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(e.url+"/console/approvals/"+pending.ApprovalID),
		chromedp.WaitVisible(chromedp.CSS(".why-not")),
	))
	require.Contains(t, text(t, ctx, ".why-not"), "Only an operator with the role manager")
	buttons, err := chromedp.Run(ctx, chromedp.Nodes(chromedp.CSS("button.approve"), chromedp.AtLeast(0)))
	require.NoError(t, err)
	require.Empty(t, buttons, "no approve button for an operator without the role")
	shoot(t, ctx, "approval-not-approver")
	require.Equal(t, "pending", e.approvalStatus(pending.ApprovalID))
}

func TestConsoleBrowserRejectedDeleteLeavesTheTenant(t *testing.T) {
	t.Parallel()
	e := setup(t)
	ctx := browser(t)
	del, err := e.invoke("delete_tenant_account", e.key("delete"), `{"tenant_id":"t_101"}`)
	require.NoError(t, err)
	require.True(t, del.Pending)

	browserSignIn(t, ctx, e.url, tools.DemoOpsKey, "")
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(e.url+"/console/approvals/"+del.ApprovalID),
		chromedp.WaitVisible(chromedp.CSS("#reject-reason")),
		chromedp.Click(chromedp.CSS("button.reject")),
		chromedp.WaitVisible(chromedp.CSS("p.problem")),
	))
	require.Contains(t, text(t, ctx, "p.problem"), "A rejection needs a reason", "the browser sent no reason, and nothing was decided")
	require.Equal(t, "pending", e.approvalStatus(del.ApprovalID))
	require.NoError(t, chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.CSS("#reject-reason"), "the caller is not the account holder"),
		chromedp.Click(chromedp.CSS("button.reject")),
		chromedp.WaitVisible(chromedp.CSS("p.notice")),
	))
	require.Contains(t, text(t, ctx, "p.notice"), "Rejected")

	done, err := e.agent.Wait(e.ctx, del.InvocationID)
	require.NoError(t, err)
	require.NotEqual(t, "succeeded", string(done.State))
	tenant, err := e.standins.Reader().HTTPResource(e.ctx, e.standins.SandboxURL(), e.standins.Sandbox.Token(), "/v1/tenants/t_101")
	require.NoError(t, err, "the tenant is still there")
	require.Equal(t, "t_101", tenant.ID)
	require.Equal(t, false, tenant.Detail["deleted"])
}

// overflowing lists what is wider than it shows on the page: the page
// itself, and each table or cell of the request's event log, whose last
// column holds the longest values.
const overflowing = `(() => {
	const out = [];
	const page = document.documentElement;
	if (page.scrollWidth > page.clientWidth) out.push("page " + page.scrollWidth + " > " + page.clientWidth);
	for (const el of document.querySelectorAll("section[aria-labelledby=log] table, section[aria-labelledby=log] td")) {
		if (el.scrollWidth > el.clientWidth) out.push(el.tagName + " " + el.scrollWidth + " > " + el.clientWidth + ": " + el.textContent.slice(0, 60));
	}
	return out;
})()`

func TestConsoleBrowserEventLogFitsPhoneAndDesktop(t *testing.T) {
	t.Parallel()
	e := setup(t)
	ctx := browser(t)
	pending := e.requestRefund("refund")
	// A modification logs both argument documents, the longest values an
	// event carries.
	_, err := e.ops.Modify(e.ctx, pending.ApprovalID,
		[]byte(`{"tenant_id":"t_100","amount_cents":1500,"reason":"`+strings.Repeat("Duplicate_rent_payment_in_March;", 8)+`"}`),
		"half was already refunded by cheque, see ticket 4711")
	require.NoError(t, err)

	browserSignIn(t, ctx, e.url, tools.DemoOpsKey, "")
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(e.url+"/console/approvals/"+pending.ApprovalID),
		chromedp.WaitVisible(chromedp.CSS("#log")),
	))
	require.Contains(t, text(t, ctx, "section[aria-labelledby=log] table"), "modified")
	for _, w := range widths {
		require.NoError(t, chromedp.Do(ctx, chromedp.EmulateViewport(w.width, w.height)))
		over, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](overflowing))
		require.NoError(t, err)
		require.Empty(t, over, "at %d px the event log is cut off", w.width)
	}
	shoot(t, ctx, "approval-event-log")
}
