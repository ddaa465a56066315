package console

import (
	"net/http"
	"net/url"
	"slices"

	"github.com/maestro-run/maestro/apitype"
)

// ageChoice is one option of a listing's age filter.
type ageChoice struct {
	Value, Label string
}

// ageChoices are the ages a listing may be narrowed to: how long a row
// has waited at least. The API takes any duration; the console offers the
// ones an operator asks about.
var ageChoices = []ageChoice{
	{"", "any age"},
	{"5m", "over 5 minutes"},
	{"1h", "over an hour"},
	{"24h", "over a day"},
}

// listFilter is a listing page's filters and position, as its URL carries
// them.
type listFilter struct {
	Tool, Agent, Age, Cursor string
}

// readListFilter reads a listing's filters from its URL, or answers why
// it cannot: the age filter offers only ageChoices. The API checks the
// rest.
func (c *Console) readListFilter(w http.ResponseWriter, r *http.Request, v *visit) (listFilter, bool) {
	q := r.URL.Query()
	f := listFilter{Tool: q.Get("tool"), Agent: q.Get("agent"), Age: q.Get("age"), Cursor: q.Get("cursor")}
	if !slices.ContainsFunc(ageChoices, func(a ageChoice) bool { return a.Value == f.Age }) {
		c.renderProblem(w, r, v, http.StatusBadRequest, "The age filter must be one of the choices offered: 5m, 1h, 24h, or none.")
		return listFilter{}, false
	}
	return f, true
}

// query is the API listing the filter asks for.
func (f listFilter) query(status string) apitype.ListQuery {
	return apitype.ListQuery{Status: status, Tool: f.Tool, Agent: f.Agent, OlderThan: f.Age, Cursor: f.Cursor}
}

// values are the filter's query parameters, without its position.
func (f listFilter) values() url.Values {
	v := url.Values{}
	for name, val := range map[string]string{"tool": f.Tool, "agent": f.Agent, "age": f.Age} {
		if val != "" {
			v.Set(name, val)
		}
	}
	return v
}

// link is path with the filter and, when set, the cursor to start after.
func (f listFilter) link(path, cursor string) string {
	v := f.values()
	if cursor != "" {
		v.Set("cursor", cursor)
	}
	if len(v) == 0 {
		return path
	}
	return path + "?" + v.Encode()
}

// pageView is what a listing page shows besides its rows: its filters,
// how many rows they match, and links to the first and next pages.
type pageView struct {
	// Path is the listing's own page, where its filter form goes.
	Path   string
	Filter listFilter
	Ages   []ageChoice
	Shown  int
	Total  int
	// First links to the first page when this is not it; Next to the
	// following page when there is one.
	First, Next string
	// Filtered says whether any filter narrows the listing.
	Filtered bool
}

func newPageView(path string, f listFilter, shown int, p apitype.Paging) pageView {
	v := pageView{Path: path, Filter: f, Ages: ageChoices, Shown: shown, Total: p.Total, Filtered: len(f.values()) > 0}
	if f.Cursor != "" {
		v.First = f.link(path, "")
	}
	if p.Next != "" {
		v.Next = f.link(path, p.Next)
	}
	return v
}
