package ses_test

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/smithy-go"
	"github.com/stretchr/testify/require"
)

func TestSDKCredentialFailures(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	cases := []struct {
		name, accessKeyID, secret, code string
	}{
		{"unknown access key", "AKIAUNKNOWN000000000", f.standin.SecretAccessKey(), "UnrecognizedClientException"},
		{"wrong secret", f.standin.AccessKeyID(), "not-the-secret", "SignatureDoesNotMatch"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := f.clientWith(tc.accessKeyID, tc.secret, noRetries).SendEmail(t.Context(), simpleInput())
			var apiErr smithy.APIError
			require.ErrorAs(t, err, &apiErr)
			require.Equal(t, tc.code, apiErr.ErrorCode())
			var respErr *awshttp.ResponseError
			require.ErrorAs(t, err, &respErr)
			require.Equal(t, http.StatusForbidden, respErr.HTTPStatusCode())
		})
	}
	require.Zero(t, f.standin.CountEmails())
}

func TestUnsignedRequestIsRejected(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	req := f.signedRequest(t, `{}`)
	req.Header.Del("Authorization")

	res := f.do(t, req)
	require.Equal(t, http.StatusForbidden, res.status)
	require.Equal(t, "MissingAuthenticationTokenException", res.errorType)
	require.Equal(t, "Missing Authentication Token", res.body["message"])
}

func TestTamperedRequestsAreRejected(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	const body = `{"FromEmailAddress":"office@example.com"}`
	cases := map[string]func(*http.Request){
		"body changed after signing": func(r *http.Request) {
			changed := strings.Replace(body, "office", "attack", 1)
			r.Body = io.NopCloser(bytes.NewReader([]byte(changed)))
		},
		"signed header changed": func(r *http.Request) {
			r.Header.Set("Content-Type", "text/plain")
		},
		"date changed": func(r *http.Request) {
			r.Header.Set("X-Amz-Date", "20200101T000000Z")
		},
		"wrong service": func(r *http.Request) {
			r.Header.Set("Authorization", strings.Replace(r.Header.Get("Authorization"), "/ses/", "/email/", 1))
		},
	}
	for name, tamper := range cases {
		req := f.signedRequest(t, body)
		tamper(req)
		res := f.do(t, req)
		require.Equal(t, http.StatusForbidden, res.status, name)
		require.Equal(t, "SignatureDoesNotMatch", res.errorType, name)
	}

	// Headers added after signing, as proxies and transports do, are fine.
	req := f.signedRequest(t, simpleBody)
	req.Header.Set("X-Forwarded-For", "10.0.0.1")
	res := f.do(t, req)
	require.Equal(t, http.StatusOK, res.status, res.body)
	require.Equal(t, 1, f.standin.CountEmails())
}

func TestMalformedAuthorization(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	for _, header := range []string{
		"Bearer token",
		"AWS4-HMAC-SHA256 Credential=AKIA/20240501/us-east-1/ses/aws4_request",
		"AWS4-HMAC-SHA256 Credential=AKIA, SignedHeaders=host, Signature=00",
		"AWS4-HMAC-SHA256 garbage",
	} {
		req := f.signedRequest(t, `{}`)
		req.Header.Set("Authorization", header)
		res := f.do(t, req)
		require.Equal(t, http.StatusForbidden, res.status, header)
		require.Equal(t, "IncompleteSignatureException", res.errorType, header)
	}
}

const simpleBody = `{
	"FromEmailAddress": "office@example.com",
	"Destination": {"ToAddresses": ["maria.lopez@example.com"]},
	"Content": {"Simple": {"Subject": {"Data": "Hi"}, "Body": {"Text": {"Data": "Hello"}}}}
}`
