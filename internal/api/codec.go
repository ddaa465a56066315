package api

import (
	"net/http"
	"strings"

	"go.temporal.io/sdk/converter"

	"github.com/maestro-run/maestro/apitype"
	"github.com/maestro-run/maestro/internal/admission"
	"github.com/maestro-run/maestro/internal/observation"
	mt "github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/tools"
)

const (
	codecPrefix = "/codec/"
	// codecMaxBodyBytes fits a history's largest payloads, a transcript
	// included, base64 and JSON inflating them by about a half.
	codecMaxBodyBytes = 8 << 20
)

// codecRoutes serve the Temporal codec protocol's decode, so an operator's
// UI or CLI shows an encrypted history in clear. Only decode: nothing
// outside maestro's own clients writes payloads in its histories, so
// encode is refused with the reason. Every argument and transcript is
// readable through it, so only operators the catalog grants
// decode_payloads may call it.
//
// Each is served under /codec/{namespace}/ and under /codec/ alone: the
// Temporal CLI fills {namespace} in the endpoint with its --namespace,
// which may be empty, and maestro's histories live in one namespace
// anyway.
func (s *Server) codecRoutes() {
	decode := s.handleNotFound
	if s.cfg.Codec != nil {
		// The SDK's handler speaks the protocol: a JSON {"payloads": [...]}
		// in, the same decoded out, 400 with the reason on a payload it
		// cannot decode.
		decode = converter.NewPayloadCodecHTTPHandler(s.cfg.Codec).ServeHTTP
	}
	for _, base := range []string{"/codec/{namespace}", "/codec"} {
		s.mux.HandleFunc("OPTIONS "+base+"/decode", s.handleCodecPreflight)
		s.mux.HandleFunc("POST "+base+"/decode", s.withCodecCORS(s.opsOnly(s.permitted(tools.PermDecodePayloads, decode))))
		s.mux.HandleFunc("OPTIONS "+base+"/encode", s.handleCodecPreflight)
		s.mux.HandleFunc("POST "+base+"/encode", s.withCodecCORS(handleCodecEncode))
	}
}

// emptyCodecNamespace rewrites /codec//decode, which the Temporal CLI
// posts to when its namespace is empty, to /codec/decode: the mux would
// otherwise answer it with a redirect to the cleaned path, which the CLI
// does not expect of a codec endpoint. The request is changed in
// place, not copied, so the handlers around the API still see the route
// the mux matches.
func emptyCodecNamespace(r *http.Request) {
	rest, ok := strings.CutPrefix(r.URL.Path, codecPrefix+"/")
	if ok && (rest == "decode" || rest == "encode") {
		r.URL.Path, r.URL.RawPath = codecPrefix+rest, ""
	}
}

// handleCodecEncode refuses the codec protocol's encode: maestro's
// histories are written by maestro alone.
func handleCodecEncode(w http.ResponseWriter, r *http.Request) {
	writeRefusal(w, &apitype.Refusal{HTTPStatus: http.StatusNotFound, Observation: observation.Error(observation.Failure{
		Code:          mt.CodeNotFound,
		Summary:       "maestro's codec endpoint only decodes; nothing was encoded",
		RootCause:     "maestro alone writes the payloads in its workflow histories, encrypting them itself, so it serves the codec protocol's decode and not its encode.",
		Remediation:   "Start calls and send decisions through maestro's API or console, not through Temporal.",
		StopCondition: "Do not retry.",
	}, &mt.Source{System: "maestro"})})
}

// withCodecCORS lets the configured UI origin's browser read the answer,
// refusals included, so the UI can say why it shows no payloads.
func (s *Server) withCodecCORS(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Add("Vary", "Origin")
		if s.codecOriginAllowed(r) {
			w.Header().Set("Access-Control-Allow-Origin", s.cfg.CodecOrigin)
			w.Header().Set("Access-Control-Allow-Credentials", "true")
		}
		next(w, r)
	}
}

func (s *Server) codecOriginAllowed(r *http.Request) bool {
	origin := r.Header.Get("Origin")
	return s.cfg.CodecOrigin != "" && origin != "" && strings.EqualFold(origin, s.cfg.CodecOrigin)
}

// handleCodecPreflight answers a browser's CORS preflight: the configured
// origin may POST with the headers the Temporal UI sends; any other
// origin is refused. Browsers send no credentials on a preflight, so it
// needs none.
func (s *Server) handleCodecPreflight(w http.ResponseWriter, r *http.Request) {
	w.Header().Add("Vary", "Origin")
	if !s.codecOriginAllowed(r) {
		writeRefusal(w, admission.BadRequest(http.StatusForbidden, mt.CodeInvalidRequest,
			"this origin may not call the codec endpoint: set MAESTRO_CODEC_CORS_ORIGIN to the Temporal UI's origin"))
		return
	}
	h := w.Header()
	h.Set("Access-Control-Allow-Origin", s.cfg.CodecOrigin)
	h.Set("Access-Control-Allow-Credentials", "true")
	h.Set("Access-Control-Allow-Methods", "POST")
	h.Set("Access-Control-Allow-Headers", "Authorization, Content-Type, X-Namespace")
	h.Set("Access-Control-Max-Age", "600")
	w.WriteHeader(http.StatusNoContent)
}
