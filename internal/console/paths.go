package console

import (
	"net/url"
	"strings"

	"github.com/maestro-run/maestro/workflows"
)

// segment is the one way an ID enters a console URL. Agents choose session
// IDs and operation keys, so an ID is always one path segment: url.PathEscape
// encodes '/', '\', '?', '#', ';' and '%'. An ID of only dots is encoded
// too, though browsers resolve "%2E" and "%2E%2E" as dot segments all the
// same (the URL Standard says so): admission refuses "." and "..", and a
// form whose address a browser resolved elsewhere is refused by bound.
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

// heldPath is the console page of a session's post-call item held for a
// human, under the key the API reconciles it by.
func heldPath(sessionID, itemKey string) string {
	return reconciliationPath(workflows.PostCallHeldKey(sessionID, itemKey))
}
