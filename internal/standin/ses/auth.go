package ses

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/textproto"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
)

const (
	signingAlgorithm = "AWS4-HMAC-SHA256"
	signingService   = "ses"
	amzDateLayout    = "20060102T150405Z"
)

// authorization is a parsed SigV4 Authorization header.
type authorization struct {
	accessKeyID   string
	region        string
	service       string
	signedHeaders []string
	signature     string
}

// parseAuthorization reads
// "AWS4-HMAC-SHA256 Credential=AKID/DATE/REGION/SERVICE/aws4_request, SignedHeaders=a;b, Signature=hex".
func parseAuthorization(header string) (authorization, error) {
	rest, ok := strings.CutPrefix(header, signingAlgorithm+" ")
	if !ok {
		return authorization{}, fmt.Errorf("unsupported authorization type, expected %s", signingAlgorithm)
	}
	fields := map[string]string{}
	for part := range strings.SplitSeq(rest, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			return authorization{}, fmt.Errorf("malformed authorization field %q", part)
		}
		fields[k] = v
	}
	for _, k := range []string{"Credential", "SignedHeaders", "Signature"} {
		if fields[k] == "" {
			return authorization{}, fmt.Errorf("authorization header requires '%s' parameter", k)
		}
	}
	scope := strings.Split(fields["Credential"], "/")
	if len(scope) != 5 || scope[4] != "aws4_request" {
		return authorization{}, fmt.Errorf("malformed credential scope %q", fields["Credential"])
	}
	return authorization{
		accessKeyID:   scope[0],
		region:        scope[2],
		service:       scope[3],
		signedHeaders: strings.Split(fields["SignedHeaders"], ";"),
		signature:     fields["Signature"],
	}, nil
}

// verify checks the request's SigV4 signature by signing a copy of it with
// the configured secret and comparing. Any region is accepted; the service
// must be SES's signing name.
func (s *Server) verify(r *http.Request, body []byte) *apiError {
	header := r.Header.Get("Authorization")
	if header == "" {
		return errMissingToken
	}
	auth, err := parseAuthorization(header)
	if err != nil {
		return incompleteSignature("%v", err)
	}
	if !hmac.Equal([]byte(auth.accessKeyID), []byte(s.accessKeyID)) {
		return errUnrecognizedClient
	}
	if auth.service != signingService {
		return &apiError{http.StatusForbidden, "SignatureDoesNotMatch",
			fmt.Sprintf("Credential should be scoped to correct service: '%s'.", signingService)}
	}
	signedAt, err := time.Parse(amzDateLayout, r.Header.Get("X-Amz-Date"))
	if err != nil {
		return incompleteSignature("Authorization header requires existence of either a 'X-Amz-Date' or a 'Date' header.")
	}
	want, err := s.signature(r, auth, body, signedAt)
	if err != nil || !hmac.Equal([]byte(want), []byte(auth.signature)) {
		return errSignatureMismatch
	}
	return nil
}

// signature computes what the signature of r should be. The copy carries
// only the headers the client says it signed: anything added in transit
// (Accept-Encoding, for one) was never part of the signature.
func (s *Server) signature(r *http.Request, auth authorization, body []byte, signedAt time.Time) (string, error) {
	u := *r.URL
	u.Scheme, u.Host = "http", r.Host
	clone := &http.Request{Method: r.Method, URL: &u, Host: r.Host, Header: http.Header{}}
	for _, name := range auth.signedHeaders {
		switch name {
		case "host":
		case "content-length":
			clone.ContentLength = r.ContentLength
		default:
			clone.Header[textproto.CanonicalMIMEHeaderKey(name)] = r.Header.Values(name)
		}
	}
	sum := sha256.Sum256(body)
	creds := aws.Credentials{AccessKeyID: s.accessKeyID, SecretAccessKey: s.secretAccessKey}
	err := v4.NewSigner().SignHTTP(r.Context(), creds, clone, hex.EncodeToString(sum[:]), auth.service, auth.region, signedAt)
	if err != nil {
		return "", fmt.Errorf("error signing request copy: %w", err)
	}
	signed, err := parseAuthorization(clone.Header.Get("Authorization"))
	if err != nil {
		return "", fmt.Errorf("error reading own signature: %w", err)
	}
	return signed.signature, nil
}
