// Package platform reads what the voice platforms (ElevenLabs, Vapi,
// Retell) send maestro: it checks their signatures, names each signature
// for the replay guard, and turns their tool calls and end-of-call events
// into maestro's terms. It does no I/O; the API wires it to the ledger's
// replay guard, admission and the session's end.
package platform
