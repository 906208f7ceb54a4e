// Package sessionquery is the model-facing session_event_read and
// session_event_search tools (upstream's tool-session-query): a model reads
// one event of its own session, as the log stores it, with optional
// neighbouring summaries, or searches the earlier events of the session.
// The data keys our stack adds beside upstream's (a result's sandbox facts)
// are left out of what the model reads ([UpstreamView]): it reads an event
// as upstream logs it; a recording written from our log is made the same
// way.
//
// # Output
//
// session_event_read renders, VERBATIM (upstream's text):
//
//	Session <session id> — <title>
//	Target event seq <seq>:
//	```json
//	<the event as JSON.stringify(event, null, 2) prints it>
//	```
//
// then, when asked, a blank line, "Before:" and "After:" with one entry per
// neighbour, "- seq <n> | <type> | <ISO time>" and either " | (no semantic
// text)" or the event's text indented by two spaces. The event keeps the key
// order the log stores; strings are escaped as JavaScript's JSON.stringify
// escapes them (no HTML escaping, non-ASCII raw). The title is the session's
// latest session/title, else "untitled".
//
// session_event_search trims the query and collapses its whitespace, then
// searches the events before the calling step as upstream's
// session-query-sqlite does (dsh-session-query-sqlite lib/index.js):
//
//   - an event's text is [SemanticText] (upstream's extractSessionEventText);
//     events without text (steps, turn starts, assistant chunks, headers,
//     titles) are not searched;
//   - the query is one FTS5 phrase under the unicode61 tokenizer: its words
//     (runs of letters, numbers and private-use characters, lower-cased)
//     must appear consecutively and in order; substrings of words do not
//     match;
//   - hits are ordered by the number of highlighted matches (overlapping
//     phrase instances count once), then shorter text (code points), then
//     later time, then higher seq; [MaxSearchResults] caps them;
//   - a snippet is the text with whitespace runs collapsed, cut to 240 code
//     points starting a third of the window before the first match, "…"
//     where text was cut.
//
// Departure (ours): unicode61 also strips Latin diacritics, so upstream's
// "cafe" finds "café"; here it does not.
//
// Both results are ordinary text results, so the stack's spill policy bounds
// them like any other.
//
// # Authorisation
//
// A call must run for an agent with a session log. session_id omitted means
// the caller's session; another id is refused as outside the caller's
// workspace unless [Config.Sessions] resolves it to a session whose header
// cwd is the caller's. [Store] resolves the ids of a directory of session
// logs, every workspace's (the stack's Config.SessionQuery.Store), by the id in
// each header; a stored session is read from its file, never written.
//
// # Imports
//
// pipeline, pipeline/session, internal/jsjson (JSON as JavaScript prints
// it) and tools/toolreg (the registrations) only; never stack, sandbox or
// harness.
package sessionquery
