package observation

import (
	"encoding/json"
	"unicode/utf8"

	mt "github.com/maestro-run/maestro/maestrotype"
)

// Failure describes a failed or refused call in the terms an agent needs:
// why, what is safe to do, and when to stop trying.
type Failure struct {
	Code          mt.Code
	Summary       string
	RootCause     string
	Remediation   string
	StopCondition string
	Wording       string
	Payload       any
}

// Error builds an error observation.
func Error(f Failure, src *mt.Source) mt.Observation {
	return problem(mt.StatusError, f, src)
}

// Warning builds a warning observation: the call worked, and what it found
// calls for a next step rather than a plain success.
func Warning(f Failure, src *mt.Source) mt.Observation {
	return problem(mt.StatusWarning, f, src)
}

// Pending builds a pending observation: nothing is claimed yet.
func Pending(f Failure, src *mt.Source) mt.Observation {
	return problem(mt.StatusPending, f, src)
}

func problem(status mt.Status, f Failure, src *mt.Source) mt.Observation {
	return mt.Observation{
		Status:  status,
		Code:    f.Code,
		Summary: f.Summary,
		Wording: f.Wording,
		Payload: Cap(f.Payload),
		Source:  src,
		NextActions: &mt.NextActions{
			RootCause:     f.RootCause,
			Remediation:   f.Remediation,
			StopCondition: f.StopCondition,
		},
	}
}

// Success builds a success observation. A receipt, when given, travels with
// the wording derived from it.
func Success(summary, wording string, payload json.RawMessage, receipt *mt.Receipt, src *mt.Source) mt.Observation {
	return mt.Observation{
		Status:  mt.StatusSuccess,
		Summary: summary,
		Wording: wording,
		Payload: Cap(payload),
		Source:  src,
		Receipt: receipt,
	}
}

// Cap encodes v and, when it exceeds MaxPayloadBytes, replaces it with a
// truncated preview so the observation stays valid JSON.
func Cap(v any) json.RawMessage {
	if v == nil {
		return nil
	}
	var raw []byte
	switch t := v.(type) {
	case json.RawMessage:
		raw = t
	case []byte:
		raw = t
	default:
		b, err := json.Marshal(v)
		if err != nil {
			return nil
		}
		raw = b
	}
	if len(raw) == 0 {
		return nil
	}
	if len(raw) <= mt.MaxPayloadBytes {
		return raw
	}
	preview := raw[:mt.MaxPayloadBytes/2]
	for !utf8.Valid(preview) && len(preview) > 0 {
		preview = preview[:len(preview)-1]
	}
	b, _ := json.Marshal(map[string]any{
		"truncated":      true,
		"original_bytes": len(raw),
		"preview":        string(preview),
	})
	return b
}
