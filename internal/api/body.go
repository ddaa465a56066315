package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"os"
	"strings"

	"github.com/maestro-run/maestro/apitype"
	"github.com/maestro-run/maestro/internal/admission"
	mt "github.com/maestro-run/maestro/maestrotype"
)

// decodeJSON reads a JSON body strictly: the right content type, a bounded
// size, no unknown fields and nothing after the object.
func (s *Server) decodeJSON(w http.ResponseWriter, r *http.Request, v any) *apitype.Refusal {
	if ref := requireJSON(r); ref != nil {
		return ref
	}
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, s.bodyLimit(r)))
	dec.DisallowUnknownFields()
	return s.jsonRefusal(w, r, decodeOne(dec, v))
}

// checkJSONObject holds a body already read whole to what decodeJSON
// takes: one JSON object, not empty, nothing after it. Unknown fields are
// let through, as a voice platform's body carries many maestro does not
// read; the content type is held by requireJSON.
func (s *Server) checkJSONObject(w http.ResponseWriter, r *http.Request, body []byte) *apitype.Refusal {
	return s.jsonRefusal(w, r, decodeOne(json.NewDecoder(bytes.NewReader(body)), &struct{}{}))
}

// requireJSON refuses a body not declared application/json; parameters
// such as charset are allowed. A request without a Content-Type is refused
// too: maestro's clients and the voice platforms all send one.
func requireJSON(r *http.Request) *apitype.Refusal {
	mediaType, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mediaType != "application/json" {
		return admission.BadRequest(http.StatusUnsupportedMediaType, mt.CodeUnsupportedMedia,
			"Content-Type must be application/json")
	}
	return nil
}

// decodeOne decodes one JSON value into v and refuses anything after it.
func decodeOne(dec *json.Decoder, v any) error {
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.Decode(&struct{}{}) != io.EOF {
		return errors.New("unexpected data after the JSON object")
	}
	return nil
}

// jsonRefusal says why a JSON body could not be taken; nil when err is.
func (s *Server) jsonRefusal(w http.ResponseWriter, r *http.Request, err error) *apitype.Refusal {
	var tooBig *http.MaxBytesError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &tooBig):
		s.drainBody(w, r)
		return tooLargeRefusal(tooBig.Limit)
	case errors.Is(err, os.ErrDeadlineExceeded):
		return admission.BadRequest(http.StatusRequestTimeout, mt.CodeInvalidRequest,
			"the request body did not arrive within the server's read timeout")
	case errors.Is(err, io.EOF):
		return admission.BadRequest(http.StatusBadRequest, mt.CodeInvalidRequest, "the request body is empty")
	default:
		return admission.BadRequest(http.StatusBadRequest, mt.CodeInvalidRequest, "malformed JSON: "+err.Error())
	}
}

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
