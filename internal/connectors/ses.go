package connectors

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sesv2"
	"github.com/aws/aws-sdk-go-v2/service/sesv2/types"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/maestro-run/maestro/maestrotype"
)

// SESConfig configures the SES v2 email connector.
type SESConfig struct {
	// Endpoint overrides the SES endpoint. Optional: default AWS's regional
	// endpoint.
	Endpoint string
	// Region is the AWS region. Optional: default "us-east-1".
	Region string
	// AccessKeyID and SecretAccessKey are static credentials, with
	// SessionToken when they are temporary. Optional: without both, the
	// AWS default credential chain is used (environment, shared files, web
	// identity, ECS task role, EC2 instance role).
	AccessKeyID     string
	SecretAccessKey string
	SessionToken    string
	// From is the verified sender address. Required.
	From string
	// Timeout bounds each request. Optional: default 10s.
	Timeout time.Duration
}

// WithDefaults returns c with optional fields filled in.
func (c SESConfig) WithDefaults() SESConfig {
	if c.Region == "" {
		c.Region = "us-east-1"
	}
	if c.Timeout == 0 {
		c.Timeout = 10 * time.Second
	}
	return c
}

func (c SESConfig) validate() error {
	if (c.AccessKeyID == "") != (c.SecretAccessKey == "") {
		return errors.New("ses: set both the access key ID and the secret access key, or neither to use the AWS default credential chain")
	}
	if c.SessionToken != "" && c.AccessKeyID == "" {
		return errors.New("ses: a session token needs the access key ID and secret access key it was issued with")
	}
	if c.From == "" {
		return errors.New("ses: a From address is required")
	}
	return nil
}

// credentials are the static keys when both are set, else the AWS default
// credential chain. Loading the chain reads the environment and shared
// files only; it asks for credentials, from a role if need be, at the
// first request, and caches them until they expire.
func (c SESConfig) credentials(ctx context.Context) (aws.CredentialsProvider, error) {
	if c.AccessKeyID != "" {
		return credentials.NewStaticCredentialsProvider(c.AccessKeyID, c.SecretAccessKey, c.SessionToken), nil
	}
	cfg, err := config.LoadDefaultConfig(ctx, config.WithRegion(c.Region))
	if err != nil {
		return nil, fmt.Errorf("ses: error loading the AWS default credential chain: %w", err)
	}
	return cfg.Credentials, nil
}

// SES sends email through the real aws-sdk-go-v2 SES v2 client.
type SES struct {
	client *sesv2.Client
	from   string
}

// NewSES builds the connector.
func NewSES(cfg SESConfig) (*SES, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	creds, err := cfg.credentials(context.Background())
	if err != nil {
		return nil, err
	}
	opts := sesv2.Options{
		Region:      cfg.Region,
		Credentials: creds,
		HTTPClient:  &http.Client{Timeout: cfg.Timeout},
		// SendEmail takes no idempotency key: an SDK-level retry after a
		// lost response could send the mail twice. Retries belong to the
		// workflow, which consults the ledger first.
		RetryMaxAttempts: 1,
	}
	if cfg.Endpoint != "" {
		opts.BaseEndpoint = aws.String(cfg.Endpoint)
	}
	return &SES{client: sesv2.New(opts), from: cfg.From}, nil
}

// Do sends one email.
func (s *SES) Do(ctx context.Context, call Call) (Result, error) {
	to, err := call.Setting("to")
	if err != nil {
		return Result{}, err
	}
	subject, err := call.Setting("subject")
	if err != nil {
		return Result{}, err
	}
	body, err := call.Setting("body")
	if err != nil {
		return Result{}, err
	}
	out, err := s.client.SendEmail(ctx, &sesv2.SendEmailInput{
		FromEmailAddress: aws.String(s.from),
		Destination:      &types.Destination{ToAddresses: []string{to}},
		Content: &types.EmailContent{Simple: &types.Message{
			Subject: &types.Content{Data: aws.String(subject), Charset: aws.String("UTF-8")},
			Body:    &types.Body{Text: &types.Content{Data: aws.String(body), Charset: aws.String("UTF-8")}},
		}},
		EmailTags: []types.MessageTag{{Name: aws.String("operation_key"), Value: aws.String(tagValue(call.IdempotencyKey))}},
	})
	if err != nil {
		return Result{}, classifySES(err)
	}
	if out.MessageId == nil || *out.MessageId == "" {
		return Result{}, &Error{Class: ClassUnknown, Provider: "ses", Message: "SES answered without a message ID"}
	}
	id := *out.MessageId
	payload, err := json.Marshal(map[string]string{"message_id": id, "to": to})
	if err != nil {
		return Result{}, fmt.Errorf("error encoding ses payload: %w", err)
	}
	return Result{
		Receipt: &maestrotype.Receipt{
			Provider: "ses",
			ID:       id,
			Status:   "accepted",
			Fields:   map[string]string{maestrotype.ReceiptMessageID: id},
			IssuedAt: time.Now().UTC(),
		},
		Payload: payload,
	}, nil
}

// tagValue keeps only the characters SES allows in tag values.
func tagValue(s string) string {
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s) && len(out) < 256; i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.' || c == '@' {
			out = append(out, c)
		} else {
			out = append(out, '_')
		}
	}
	if len(out) == 0 {
		return "none"
	}
	return string(out)
}

func classifySES(err error) *Error {
	var respErr *smithyhttp.ResponseError
	if errors.As(err, &respErr) && respErr.HTTPStatusCode() != 0 {
		code := ""
		msg := respErr.Error()
		var apiErr smithy.APIError
		if errors.As(err, &apiErr) {
			code, msg = apiErr.ErrorCode(), apiErr.ErrorMessage()
		}
		return &Error{Class: classifyStatus(respErr.HTTPStatusCode()), Provider: "ses", HTTPStatus: respErr.HTTPStatusCode(), ProviderCode: code, Message: msg, Err: err}
	}
	return classifyTransport("ses", err)
}
