package console

import (
	"net/url"
	"strings"
)

// segment is the one way an ID enters a console URL. Agents choose session
// IDs and operation keys, so an ID is always one path segment: url.PathEscape
// encodes '/', '?', '#' and '%', and dots are encoded too, because a browser
// resolves a bare "." or ".." segment before it sends the request.
func segment(id string) string {
	s := url.PathEscape(id)
	if strings.Trim(s, ".") == "" {
		s = strings.ReplaceAll(s, ".", "%2E")
	}
	return s
}

// objectPath is the console page of one object, or of an action on it.
func objectPath(collection, id string, action ...string) string {
	p := "/console/" + collection + "/" + segment(id)
	for _, a := range action {
		p += "/" + a
	}
	return p
}

func approvalPath(id string, action ...string) string {
	return objectPath("approvals", id, action...)
}

func sessionPath(id string, action ...string) string {
	return objectPath("sessions", id, action...)
}

func reconciliationPath(key string, action ...string) string {
	return objectPath("reconciliations", key, action...)
}
