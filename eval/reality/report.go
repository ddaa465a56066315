package reality

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	mt "github.com/maestro-run/maestro/maestrotype"
)

// Verdict is a tool's outcome in a run.
type Verdict string

const (
	// Pass: the provider confirmed the effect through its own API.
	Pass Verdict = "PASS"
	// Fail: the call failed, or its effect could not be read back as sent.
	Fail Verdict = "FAIL"
	// Skip: the config chose not to fire the tool, and said why.
	Skip Verdict = "SKIP"
)

// ReadBack is what one provider's API said about an effect.
type ReadBack struct {
	Provider string `json:"provider"`
	ID       string `json:"id"`
	// Status is the provider's own status for the effect, e.g. Twilio's
	// "sent" or a resource's "cancelled".
	Status string `json:"status,omitempty"`
	// Checked says what the provider's answer was compared with.
	Checked string `json:"checked,omitempty"`
	// Error is why the read failed; a failed read fails the tool.
	Error string `json:"error,omitempty"`
}

func (r ReadBack) String() string {
	if r.Error != "" {
		return r.Provider + ": read failed"
	}
	return r.Provider + ": " + r.Status
}

// Result is one tool's line in the report.
type Result struct {
	Tool      string  `json:"tool"`
	Connector string  `json:"connector"`
	Verdict   Verdict `json:"verdict"`
	// Receipt is what the connector returned; it proves nothing until the
	// read-backs agree.
	Receipt   *mt.Receipt `json:"receipt,omitempty"`
	ReadBacks []ReadBack  `json:"read_backs,omitempty"`
	Detail    string      `json:"detail"`
}

func (r Result) receiptID() string {
	if r.Receipt == nil {
		return "-"
	}
	return r.Receipt.ID
}

func (r Result) readBackSummary() string {
	if len(r.ReadBacks) == 0 {
		return "-"
	}
	parts := make([]string, len(r.ReadBacks))
	for i, rb := range r.ReadBacks {
		parts[i] = rb.String()
	}
	return strings.Join(parts, "; ")
}

// Endpoints records where a run sent its calls, without credentials.
type Endpoints struct {
	Twilio       string            `json:"twilio"`
	SES          string            `json:"ses"`
	SESStore     string            `json:"ses_store"`
	HTTPServices map[string]string `json:"http_services"`
}

// Report is a whole run.
type Report struct {
	RunID       string    `json:"run_id"`
	CatalogHash string    `json:"catalog_hash"`
	Endpoints   Endpoints `json:"endpoints"`
	Started     time.Time `json:"started"`
	Seconds     float64   `json:"seconds"`
	Passed      int       `json:"passed"`
	Failed      int       `json:"failed"`
	Skipped     int       `json:"skipped"`
	Results     []Result  `json:"results"`
}

// OK reports whether no tool failed.
func (r *Report) OK() bool { return r.Failed == 0 }

func (r *Report) add(res Result) {
	switch res.Verdict {
	case Pass:
		r.Passed++
	case Skip:
		r.Skipped++
	default:
		r.Failed++
	}
	r.Results = append(r.Results, res)
}

// WriteTable prints one line per tool and a closing count.
func (r *Report) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TOOL\tCONNECTOR\tRECEIPT\tPROVIDER READ-BACK\tVERDICT\tDETAIL")
	for _, res := range r.Results {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", res.Tool, res.Connector, res.receiptID(), res.readBackSummary(), res.Verdict, oneLine(res.Detail))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "reality: %d passed, %d failed, %d skipped\n", r.Passed, r.Failed, r.Skipped)
	return err
}

// oneLine keeps a provider's multi-line error from breaking the table.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
