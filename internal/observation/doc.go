// Package observation builds the one result shape every tool call returns,
// with a root cause, a safe remediation and a stop condition on every
// failure, and payloads capped to protect the agent's context.
package observation
