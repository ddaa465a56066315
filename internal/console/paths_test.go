package console

import (
	"net/url"
	"strings"
	"testing"
)

func TestSegmentKeepsAnIDOneSegment(t *testing.T) {
	t.Parallel()
	hostile := []string{
		"x/../../approvals/apr_1/approve?", "x%2F..%2Fapprovals%2Fapr_1%2Fapprove%3F",
		"a?b", "a#b", "..", ".", "...", "a/held", `a\b`, "%2e%2e", strings.Repeat("z", 5000),
	}
	for _, id := range hostile {
		p := sessionPath(id, "facts")
		u, err := url.Parse(p)
		if err != nil {
			t.Fatalf("sessionPath(%q) = %q does not parse: %v", id, p, err)
		}
		if u.RawQuery != "" || u.Fragment != "" {
			t.Errorf("sessionPath(%q) = %q has a query or fragment", id, p)
		}
		parts := strings.Split(strings.TrimPrefix(u.EscapedPath(), "/console/sessions/"), "/")
		if len(parts) != 2 || parts[1] != "facts" {
			t.Fatalf("sessionPath(%q) = %q is not one ID segment and its action", id, p)
		}
		if parts[0] == "." || parts[0] == ".." {
			t.Errorf("sessionPath(%q) leaves a dot segment a browser would resolve", id)
		}
		got, err := url.PathUnescape(parts[0])
		if err != nil || got != id {
			t.Errorf("sessionPath(%q) segment decodes to %q (%v)", id, got, err)
		}
	}
}
