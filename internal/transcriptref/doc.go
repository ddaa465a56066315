// Package transcriptref decides which transcript_ref URLs maestro fetches a
// call's transcript from, and fetches them. A transcript_ref is chosen by
// an agent, so without a policy it would make the worker GET any address
// it can reach, internal ones included.
package transcriptref
