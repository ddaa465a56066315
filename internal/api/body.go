package api

import (
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/maestro-run/maestro/apitype"
	"github.com/maestro-run/maestro/internal/admission"
	mt "github.com/maestro-run/maestro/maestrotype"
)

func tooLargeRefusal(limit int64) *apitype.Refusal {
	return admission.BadRequest(http.StatusRequestEntityTooLarge, mt.CodePayloadTooLarge,
		fmt.Sprintf("the request body exceeds %d bytes", limit))
}

// refuseTooLarge answers 413 to a body declared larger than the limit,
// after reading it so the client can read the answer.
func (s *Server) refuseTooLarge(w http.ResponseWriter, r *http.Request, limit int64) {
	s.drainBody(w, r)
	writeRefusal(w, tooLargeRefusal(limit))
}

// drainBody reads and discards what is left of the request body, up to
// MaxDrainBytes. Closing a connection with unread data in its receive
// buffer makes the kernel answer with a reset, which destroys the response
// in flight; reading the body first lets the client see the refusal. A
// client that asked for 100-continue has not sent the body and will not.
func (s *Server) drainBody(w http.ResponseWriter, r *http.Request) {
	if strings.EqualFold(r.Header.Get("Expect"), "100-continue") {
		w.Header().Set("Connection", "close")
		return
	}
	n, _ := io.CopyN(io.Discard, r.Body, s.cfg.MaxDrainBytes)
	if n == s.cfg.MaxDrainBytes {
		// Too much to read: the connection is closed after the answer,
		// and the client may see a reset instead.
		w.Header().Set("Connection", "close")
	}
}
