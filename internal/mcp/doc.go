// Package mcp serves maestro's tools over the Model Context Protocol
// (Streamable HTTP, at /mcp): each agent key sees the agent's allowlist,
// and every tools/call goes through the same admission and invocation path
// as POST /v1/invocations, in process, so an MCP client gets every
// guarantee an HTTP client gets.
package mcp
