// Package connectors performs real side effects through the providers' own
// clients: Twilio (twilio-go), Amazon SES v2 (aws-sdk-go-v2) and a generic
// HTTP API. Every connector returns a typed receipt issued by the provider,
// and classifies failures so the caller knows whether the effect happened.
package connectors
