package ledger

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// rawJSONArg passes JSON through byte for byte; empty is NULL. It is sent as
// text, which both backends accept for their JSON columns.
func rawJSONArg(raw json.RawMessage) any {
	if len(raw) == 0 {
		return nil
	}
	return string(raw)
}

// jsonArg encodes v as JSON; a nil pointer is NULL.
func jsonArg[T any](v *T) (any, error) {
	if v == nil {
		return nil, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("error encoding %T as JSON: %w", v, err)
	}
	return string(b), nil
}

// rawJSONCol scans JSON as the bytes stored; NULL becomes nil.
type rawJSONCol struct{ dst *json.RawMessage }

func (c rawJSONCol) Scan(src any) error {
	switch v := src.(type) {
	case nil:
		*c.dst = nil
	case string:
		*c.dst = json.RawMessage(v)
	case []byte:
		// The driver may reuse its buffer after Scan returns.
		*c.dst = bytes.Clone(v)
	default:
		return fmt.Errorf("cannot scan %T into JSON", src)
	}
	return nil
}

// jsonCol decodes JSON into a Go value; NULL leaves its zero value.
type jsonCol[T any] struct{ dst *T }

func (c jsonCol[T]) Scan(src any) error {
	var zero T
	*c.dst = zero
	var b []byte
	switch v := src.(type) {
	case nil:
		return nil
	case string:
		b = []byte(v)
	case []byte:
		b = v
	default:
		return fmt.Errorf("cannot scan %T into JSON", src)
	}
	if err := json.Unmarshal(b, c.dst); err != nil {
		return fmt.Errorf("error decoding stored %T: %w", zero, err)
	}
	return nil
}
