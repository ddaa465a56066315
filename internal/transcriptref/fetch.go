package transcriptref

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	mt "github.com/maestro-run/maestro/maestrotype"
)

// Fetch GETs the transcript at raw under the policy: the URL and every
// redirect must pass Check, and a body over MaxBytes is refused rather
// than cut. A *RefusedError means the policy refused; any other error may
// pass on a retry.
func (p Policy) Fetch(ctx context.Context, raw string) (mt.Transcript, error) {
	p = p.WithDefaults()
	if err := p.Check(raw); err != nil {
		return mt.Transcript{}, err
	}
	client := &http.Client{
		Timeout: p.Timeout,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= maxRedirects {
				return &RefusedError{Rule: RuleRedirect, Detail: fmt.Sprintf("more than %d redirects", maxRedirects)}
			}
			if err := p.checkURL(req.URL); err != nil {
				var ref *RefusedError
				errors.As(err, &ref)
				return &RefusedError{Rule: RuleRedirect, Detail: "redirected to a URL the policy refuses: " + ref.Detail}
			}
			return nil
		},
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, raw, nil)
	if err != nil {
		return mt.Transcript{}, fmt.Errorf("error building transcript request: %w", err)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := client.Do(req)
	var ref *RefusedError
	if errors.As(err, &ref) {
		return mt.Transcript{}, ref
	}
	if err != nil {
		return mt.Transcript{}, fmt.Errorf("error fetching transcript: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return mt.Transcript{}, fmt.Errorf("error fetching transcript: HTTP %d", resp.StatusCode)
	}
	if resp.ContentLength > p.MaxBytes {
		return mt.Transcript{}, sizeRefused(p.MaxBytes)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, p.MaxBytes+1))
	if err != nil {
		return mt.Transcript{}, fmt.Errorf("error reading transcript: %w", err)
	}
	if int64(len(body)) > p.MaxBytes {
		return mt.Transcript{}, sizeRefused(p.MaxBytes)
	}
	var t mt.Transcript
	if err := json.Unmarshal(body, &t); err != nil {
		return mt.Transcript{}, &RefusedError{Rule: RuleFormat, Detail: "the body is not a transcript ({\"turns\":[…]}): " + err.Error()}
	}
	return t, nil
}

func sizeRefused(limit int64) *RefusedError {
	return &RefusedError{Rule: RuleSize, Detail: fmt.Sprintf("the transcript exceeds %d bytes", limit)}
}
