// Package postcall is the post-call judge: it turns a call's recorded
// intents and transcript into work items.
//
// It is the judge step of the post-call workflow (gather → judge →
// dispatch → persist) and does no I/O. Given the same call and catalog it
// returns the same items under the same keys, so a workflow that re-runs
// the step after a crash dispatches each piece of work once.
//
// Extractor is the seam for other judges, such as one backed by a language
// model that reads the transcript for work the phrase rules miss. Rules is
// the deterministic default, configured by the catalog's postcall section.
package postcall
