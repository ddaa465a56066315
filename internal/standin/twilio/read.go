package twilio

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

const (
	defaultPageSize = 50
	maxPageSize     = 1000
)

// handleFetch returns one message. Every fetch advances it one status step.
func (s *Server) handleFetch(w http.ResponseWriter, r *http.Request) {
	sid, ok := strings.CutSuffix(r.PathValue("file"), ".json")
	if !ok {
		writeError(w, notFound(r.URL.Path))
		return
	}
	m, ok := s.store.read(s.accountSID, sid, s.now())
	if !ok {
		writeError(w, notFound(r.URL.Path))
		return
	}
	writeJSON(w, http.StatusOK, m.resource())
}

// listPage is Twilio's list envelope for messages.
type listPage struct {
	FirstPageURI    string            `json:"first_page_uri"`
	End             int               `json:"end"`
	PreviousPageURI *string           `json:"previous_page_uri"`
	Messages        []messageResource `json:"messages"`
	URI             string            `json:"uri"`
	PageSize        int               `json:"page_size"`
	Start           int               `json:"start"`
	NextPageURI     *string           `json:"next_page_uri"`
	Page            int               `json:"page"`
}

// handleList pages through the account's messages, newest first. Messages on
// the returned page advance one status step, as a fetch would.
func (s *Server) handleList(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	filter, apiErr := parseFilter(q)
	if apiErr != nil {
		writeError(w, apiErr)
		return
	}
	req, apiErr := parsePageRequest(q)
	if apiErr != nil {
		writeError(w, apiErr)
		return
	}
	res, err := s.store.list(s.accountSID, filter.match, req, s.now())
	if err != nil {
		writeError(w, badRequest(codeInvalidParameter, "Invalid PageToken: %s", req.token))
		return
	}

	uris := pageURIs{
		base:    fmt.Sprintf("/%s/Accounts/%s/Messages.json", apiVersion, s.accountSID),
		filters: filter.echo,
		size:    req.size,
	}
	page := listPage{
		FirstPageURI: uris.build(0, ""),
		URI:          uris.build(req.page, req.token),
		PageSize:     req.size,
		Page:         req.page,
		Start:        req.page * req.size,
		End:          req.page * req.size,
		Messages:     make([]messageResource, 0, len(res.messages)),
	}
	for _, m := range res.messages {
		page.Messages = append(page.Messages, m.resource())
	}
	if n := len(res.messages); n > 0 {
		page.End = page.Start + n - 1
		if res.hasAfter {
			next := uris.build(req.page+1, tokenAfter+res.messages[n-1].SID)
			page.NextPageURI = &next
		}
		if res.hasBefore {
			prev := uris.build(max(req.page-1, 0), tokenBefore+res.messages[0].SID)
			page.PreviousPageURI = &prev
		}
	}
	writeJSON(w, http.StatusOK, page)
}

func parsePageRequest(q url.Values) (pageRequest, *apiError) {
	req := pageRequest{size: defaultPageSize, token: q.Get("PageToken")}
	if v := q.Get("PageSize"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return pageRequest{}, badRequest(codeInvalidParameter, "Invalid PageSize: %s", v)
		}
		req.size = min(n, maxPageSize)
	}
	if v := q.Get("Page"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return pageRequest{}, badRequest(codeInvalidParameter, "Invalid Page: %s", v)
		}
		req.page = n
	}
	return req, nil
}

// pageURIs renders page links the way Twilio does: filters first, in their
// documented order, then paging.
type pageURIs struct {
	base    string
	filters [][2]string
	size    int
}

func (p pageURIs) build(page int, token string) string {
	params := make([]string, 0, len(p.filters)+3)
	for _, kv := range p.filters {
		params = append(params, url.QueryEscape(kv[0])+"="+url.QueryEscape(kv[1]))
	}
	params = append(params, "PageSize="+strconv.Itoa(p.size), "Page="+strconv.Itoa(page))
	if token != "" {
		params = append(params, "PageToken="+url.QueryEscape(token))
	}
	return p.base + "?" + strings.Join(params, "&")
}
