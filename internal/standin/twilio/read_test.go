package twilio_test

import (
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	openapi "github.com/twilio/twilio-go/rest/api/v2010"
)

func itoa(n int) string { return strconv.Itoa(n) }

func TestFetchAdvancesStatusOnEachRead(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	c := f.client(t)
	created := f.send(t, c, recipient, sender, "hi")

	f.clock.Advance(time.Minute)
	m, err := c.Api.FetchMessage(*created.Sid, nil)
	require.NoError(t, err)
	require.Equal(t, "sent", *m.Status)
	require.Equal(t, *created.DateCreated, *m.DateSent, "sent moments after creation")
	require.Equal(t, "Wed, 01 May 2024 12:01:00 +0000", *m.DateUpdated)

	f.clock.Advance(time.Minute)
	m, err = c.Api.FetchMessage(*created.Sid, nil)
	require.NoError(t, err)
	require.Equal(t, "delivered", *m.Status)
	require.Equal(t, "Wed, 01 May 2024 12:02:00 +0000", *m.DateUpdated)
	require.Equal(t, *created.DateCreated, *m.DateSent)

	f.clock.Advance(time.Minute)
	m, err = c.Api.FetchMessage(*created.Sid, nil)
	require.NoError(t, err)
	require.Equal(t, "delivered", *m.Status, "delivered is final")
	require.Equal(t, "Wed, 01 May 2024 12:02:00 +0000", *m.DateUpdated)
}

func TestAccessorsDoNotAdvanceStatus(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	created := f.send(t, f.client(t), recipient, sender, "hi")

	for range 3 {
		m, ok := f.standin.Message(*created.Sid)
		require.True(t, ok)
		require.Equal(t, "queued", m.Status)
		require.Equal(t, "queued", f.standin.Messages()[0].Status)
	}
}

func TestFetchUnknownMessage(t *testing.T) {
	t.Parallel()
	f := newFixture(t)

	_, err := f.client(t).Api.FetchMessage("SM00000000000000000000000000000000", nil)
	restErr := restError(t, err)
	require.Equal(t, 20404, restErr.Code)
	require.Equal(t, http.StatusNotFound, restErr.Status)
	require.Contains(t, restErr.Message, "/Messages/SM00000000000000000000000000000000.json was not found")

	status, _, body := f.raw(t, http.MethodGet, "/2010-04-01/Accounts/"+f.standin.AccountSID()+"/Messages/whatever", nil)
	require.Equal(t, http.StatusNotFound, status)
	require.EqualValues(t, 20404, decodeObject(t, body)["code"])
}

func TestUnknownRouteIsTwilioNotFound(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	status, _, body := f.raw(t, http.MethodGet, "/2010-04-01/Accounts/"+f.standin.AccountSID()+"/Calls.json", nil)
	require.Equal(t, http.StatusNotFound, status)
	require.EqualValues(t, 20404, decodeObject(t, body)["code"])
}

func TestListFiltersByToAndFrom(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	c := f.client(t)
	const other = "+14155550199"
	f.send(t, c, recipient, sender, "one")
	f.send(t, c, other, sender, "two")
	f.send(t, c, recipient, "+15005550001", "three")

	byTo, err := c.Api.ListMessage((&openapi.ListMessageParams{}).SetTo(recipient))
	require.NoError(t, err)
	require.Equal(t, []string{"three", "one"}, bodies(byTo), "newest first")

	byFrom, err := c.Api.ListMessage((&openapi.ListMessageParams{}).SetFrom(sender))
	require.NoError(t, err)
	require.Equal(t, []string{"two", "one"}, bodies(byFrom))

	both, err := c.Api.ListMessage((&openapi.ListMessageParams{}).SetTo(other).SetFrom(sender))
	require.NoError(t, err)
	require.Equal(t, []string{"two"}, bodies(both))

	none, err := c.Api.ListMessage((&openapi.ListMessageParams{}).SetTo("+19999999999"))
	require.NoError(t, err)
	require.Empty(t, none)
}

func TestListFiltersByDateSent(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	c := f.client(t)
	for _, body := range []string{"may 1", "may 2", "may 3"} {
		f.send(t, c, recipient, sender, body)
		f.clock.Advance(24 * time.Hour)
	}
	may2 := time.Date(2024, 5, 2, 0, 0, 0, 0, time.UTC)

	// twilio-go sends RFC 3339 instants.
	on, err := c.Api.ListMessage((&openapi.ListMessageParams{}).SetDateSent(may2))
	require.NoError(t, err)
	require.Equal(t, []string{"may 2"}, bodies(on))

	after, err := c.Api.ListMessage((&openapi.ListMessageParams{}).SetDateSentAfter(may2))
	require.NoError(t, err)
	require.Equal(t, []string{"may 3", "may 2"}, bodies(after))

	before, err := c.Api.ListMessage((&openapi.ListMessageParams{}).SetDateSentBefore(may2.Add(12 * time.Hour)))
	require.NoError(t, err)
	require.Equal(t, []string{"may 2", "may 1"}, bodies(before), "instant bound includes noon")

	// Twilio's documented date-only forms cover whole days.
	for _, tc := range []struct {
		param, value string
		want         []string
	}{
		{"DateSent", "2024-05-02", []string{"may 2"}},
		{"DateSent<", "2024-05-02", []string{"may 2", "may 1"}},
		{"DateSent>", "2024-05-02", []string{"may 3", "may 2"}},
		{"DateSent>", "2024-05-04", nil},
	} {
		status, _, body := f.raw(t, http.MethodGet, f.messagesPath()+"?"+url.Values{tc.param: {tc.value}}.Encode(), nil)
		require.Equal(t, http.StatusOK, status)
		require.Equal(t, tc.want, rawBodies(t, body), "%s%s", tc.param, tc.value)
	}

	status, _, body := f.raw(t, http.MethodGet, f.messagesPath()+"?DateSent=yesterday", nil)
	require.Equal(t, http.StatusBadRequest, status)
	require.EqualValues(t, 20001, decodeObject(t, body)["code"])
}

func TestListPagingWithTwilioGo(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	c := f.client(t)
	var sids []string
	for i := range 7 {
		m := f.send(t, c, recipient, sender, "message "+itoa(i))
		sids = append(sids, *m.Sid)
		f.clock.Advance(time.Minute)
	}
	slices.Reverse(sids)

	all, err := c.Api.ListMessage((&openapi.ListMessageParams{}).SetPageSize(3))
	require.NoError(t, err)
	require.Equal(t, sids, messageSIDs(all), "three pages, newest first, nothing repeated")

	limited, err := c.Api.ListMessage((&openapi.ListMessageParams{}).SetPageSize(2).SetLimit(5))
	require.NoError(t, err)
	require.Equal(t, sids[:5], messageSIDs(limited))

	first, err := c.Api.PageMessage((&openapi.ListMessageParams{}).SetPageSize(3), "", "")
	require.NoError(t, err)
	require.Equal(t, sids[:3], messageSIDs(first.Messages))
	require.Equal(t, 0, first.Page)
	require.Equal(t, 3, first.PageSize)
	require.Equal(t, 0, first.Start)
	require.Equal(t, 2, first.End)
	require.Nil(t, first.PreviousPageUri)
	require.NotNil(t, first.NextPageUri)
	require.Equal(t, f.messagesPath()+"?PageSize=3&Page=0", first.FirstPageUri)
	require.Equal(t, f.messagesPath()+"?PageSize=3&Page=1&PageToken=PA"+sids[2], *first.NextPageUri)

	second, err := c.Api.PageMessage((&openapi.ListMessageParams{}).SetPageSize(3), "PA"+sids[2], "1")
	require.NoError(t, err)
	require.Equal(t, sids[3:6], messageSIDs(second.Messages))
	require.Equal(t, 3, second.Start)
	require.Equal(t, 5, second.End)
	require.NotNil(t, second.PreviousPageUri)

	status, _, body := f.raw(t, http.MethodGet, *second.PreviousPageUri, nil)
	require.Equal(t, http.StatusOK, status)
	require.Equal(t, sids[:3], rawSIDs(t, body), "previous page link leads back")

	last, err := c.Api.PageMessage((&openapi.ListMessageParams{}).SetPageSize(3), "", "2")
	require.NoError(t, err)
	require.Equal(t, sids[6:], messageSIDs(last.Messages))
	require.Equal(t, 6, last.Start)
	require.Equal(t, 6, last.End)
	require.Nil(t, last.NextPageUri)
}

func TestListPageLinksKeepFilters(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	c := f.client(t)
	for range 3 {
		f.send(t, c, recipient, sender, "hi")
	}
	f.send(t, c, "+14155550199", sender, "someone else")

	status, _, body := f.raw(t, http.MethodGet, f.messagesPath()+"?To=%2B14155550100&PageSize=2", nil)
	require.Equal(t, http.StatusOK, status)
	page := decodeObject(t, body)
	next := page["next_page_uri"].(string)
	require.Contains(t, next, "To=%2B14155550100&PageSize=2&Page=1&PageToken=PA")

	status, _, body = f.raw(t, http.MethodGet, next, nil)
	require.Equal(t, http.StatusOK, status)
	page = decodeObject(t, body)
	require.Len(t, page["messages"], 1)
	require.Nil(t, page["next_page_uri"])
}

func TestListEmptyAndInvalidPaging(t *testing.T) {
	t.Parallel()
	f := newFixture(t)

	status, _, body := f.raw(t, http.MethodGet, f.messagesPath(), nil)
	require.Equal(t, http.StatusOK, status)
	page := decodeObject(t, body)
	require.Equal(t, []any{}, page["messages"])
	require.Nil(t, page["next_page_uri"])
	require.Nil(t, page["previous_page_uri"])
	require.EqualValues(t, 50, page["page_size"])

	for _, query := range []string{"PageSize=0", "PageSize=lots", "Page=-1", "PageToken=PAnope", "PageToken=XX"} {
		status, _, body := f.raw(t, http.MethodGet, f.messagesPath()+"?"+query, nil)
		require.Equal(t, http.StatusBadRequest, status, query)
		require.EqualValues(t, 20001, decodeObject(t, body)["code"], query)
	}
}

func TestListAdvancesStatusOfListedMessages(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	c := f.client(t)
	older := f.send(t, c, recipient, sender, "older")
	newer := f.send(t, c, recipient, sender, "newer")

	page, err := c.Api.PageMessage((&openapi.ListMessageParams{}).SetPageSize(1), "", "")
	require.NoError(t, err)
	require.Equal(t, "sent", *page.Messages[0].Status)

	m, _ := f.standin.Message(*newer.Sid)
	require.Equal(t, "sent", m.Status)
	m, _ = f.standin.Message(*older.Sid)
	require.Equal(t, "queued", m.Status, "not on the page, not read")
}

func bodies(ms []openapi.ApiV2010Message) []string {
	var out []string
	for _, m := range ms {
		out = append(out, *m.Body)
	}
	return out
}

func messageSIDs(ms []openapi.ApiV2010Message) []string {
	var out []string
	for _, m := range ms {
		out = append(out, *m.Sid)
	}
	return out
}

func rawMessages(t *testing.T, body []byte) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, m := range decodeObject(t, body)["messages"].([]any) {
		out = append(out, m.(map[string]any))
	}
	return out
}

func rawBodies(t *testing.T, body []byte) []string {
	var out []string
	for _, m := range rawMessages(t, body) {
		out = append(out, m["body"].(string))
	}
	return out
}

func rawSIDs(t *testing.T, body []byte) []string {
	var out []string
	for _, m := range rawMessages(t, body) {
		out = append(out, m["sid"].(string))
	}
	return out
}
