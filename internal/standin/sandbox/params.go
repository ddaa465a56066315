package sandbox

import (
	"encoding/json"
	"errors"
	"io"
	"maps"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

const (
	maxBodyBytes     = 1 << 20
	defaultListLimit = 10
	maxListLimit     = 100
)

func readBody(w http.ResponseWriter, r *http.Request) ([]byte, *apiError) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBodyBytes))
	if err != nil {
		return nil, invalidParam("", "Unable to read request body: %v", err)
	}
	return body, nil
}

// decodeParams decodes a JSON object into dst, a pointer to a struct, and
// names the offending parameter on failure as Stripe does. Unknown
// parameters are errors: a misspelt optional field must not pass silently.
func decodeParams(body []byte, dst any) *apiError {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(body, &raw); err != nil {
		return invalidParam("", "Invalid JSON body: %v", err)
	}
	known := jsonFields(dst)
	for _, name := range slices.Sorted(maps.Keys(raw)) {
		if !known[name] {
			return invalidParam(name, "Received unknown parameter: %s", name)
		}
	}
	if err := json.Unmarshal(body, dst); err != nil {
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) {
			return invalidParam(typeErr.Field, "Invalid %s: expected %s, got %s", typeErr.Field, typeErr.Type, typeErr.Value)
		}
		return invalidParam("", "Invalid JSON body: %v", err)
	}
	return nil
}

// jsonFields lists the JSON names of the struct dst points to.
func jsonFields(dst any) map[string]bool {
	t := reflect.TypeOf(dst).Elem()
	names := make(map[string]bool, t.NumField())
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" {
			name = f.Name
		}
		names[name] = true
	}
	return names
}

// listQuery is a parsed list request: filters plus Stripe-style cursor
// paging with limit and starting_after.
type listQuery struct {
	filters       map[string]string
	limit         int
	startingAfter string
}

// parseListQuery accepts limit, starting_after and the filters named in
// fields; anything else is an unknown parameter.
func parseListQuery[T any](q url.Values, fields map[string]func(*T) string) (listQuery, *apiError) {
	lq := listQuery{filters: map[string]string{}, limit: defaultListLimit}
	for _, name := range slices.Sorted(maps.Keys(q)) {
		v := q.Get(name)
		switch {
		case name == "limit":
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 || n > maxListLimit {
				return listQuery{}, invalidParam("limit", "This value must be between 1 and %d (it is currently %s).", maxListLimit, v)
			}
			lq.limit = n
		case name == "starting_after":
			lq.startingAfter = v
		case fields[name] != nil:
			lq.filters[name] = v
		default:
			return listQuery{}, invalidParam(name, "Received unknown parameter: %s", name)
		}
	}
	return lq, nil
}

// matches reports whether every filter equals the field of v it names.
// parseListQuery has already rejected filters without a field.
func matches[T any](v *T, fields map[string]func(*T) string, filters map[string]string) bool {
	for name, want := range filters {
		if fields[name](v) != want {
			return false
		}
	}
	return true
}

// listPage is Stripe's list envelope.
type listPage[T any] struct {
	Object  string `json:"object"`
	Data    []T    `json:"data"`
	HasMore bool   `json:"has_more"`
	URL     string `json:"url"`
}

// paginate cuts one page out of items, which are already filtered and in
// list order.
func paginate[T any](items []T, id func(*T) string, q listQuery, path string) (listPage[T], *apiError) {
	start := 0
	if q.startingAfter != "" {
		i := slices.IndexFunc(items, func(v T) bool { return id(&v) == q.startingAfter })
		if i < 0 {
			return listPage[T]{}, invalidParam("starting_after", "No such object: '%s'", q.startingAfter)
		}
		start = i + 1
	}
	end := min(start+q.limit, len(items))
	data := items[start:end]
	if data == nil {
		data = []T{}
	}
	return listPage[T]{Object: "list", Data: data, HasMore: end < len(items), URL: path}, nil
}

// firstError returns the first non-nil error, so validations read as a list.
func firstError(errs ...*apiError) *apiError {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

func requireString(param, v string, maxLen int) *apiError {
	switch {
	case v == "":
		return missingParam(param)
	case len(v) > maxLen:
		return invalidParam(param, "Invalid %s: must be at most %d characters.", param, maxLen)
	}
	return nil
}

func oneOf(param, v string, allowed ...string) *apiError {
	switch {
	case v == "":
		return missingParam(param)
	case !slices.Contains(allowed, v):
		return invalidParam(param, "Invalid %s: must be one of %s.", param, strings.Join(allowed, ", "))
	}
	return nil
}

const maxExternalRef = 255

func checkExternalRef(ref *string) *apiError {
	if ref == nil {
		return nil
	}
	return requireString("external_ref", *ref, maxExternalRef)
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
