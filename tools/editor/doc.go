// Package editor is the model-facing str_replace_editor tool (upstream's
// tool-str-replace-editor): view, create, str_replace and insert on the
// local file provider of package fsobserve, with upstream's schema,
// description, texts and error messages (VERBATIM) and its order of
// checks.
//
// # Commands
//
// A path must be absolute ("The path P is not an absolute path, ...").
// view answers cat -n of a file ("Here's the content of P with line
// numbers (which has a total of N lines):", each line as %6d, two spaces,
// the text), optionally a view_range, or a directory listed two levels
// deep without hidden entries, node_modules and __pycache__, sorted by path
// in UTF-16 code unit order; either is clipped at MaxOutputChars UTF-16
// code units (default 16000) with upstream's "<response clipped>" note.
// create refuses an existing path; str_replace needs exactly one match of
// a non-empty old_str (FS_EDIT_NOT_FOUND, FS_AMBIGUOUS_EDIT with the
// lines); insert puts new_str after line insert_line (0 to the line count).
//
// # Observation and confinement
//
// With Config.Observations (as upstream with fs-observation-policy) a
// view records present{version of its stat}, a missing path absent, and a
// create or edit present{version written}; create writes createIfAbsent
// unless the file was seen present, and str_replace and insert need the
// file seen present (FS_NOT_OBSERVED, FS_NOT_FOUND) and write only while
// it is at that version (FS_STALE_VERSION). Without it, as upstream's bare
// provider, an edit writes at the version its own stat read. With
// Config.Policy every mutation is fenced by the call's sandbox mode as the
// file tools' are (fsobserve.Local.Fence: read-only denies it,
// workspace-write keeps it under the workspace, /tmp and the temp
// directory; FS_SANDBOX_DENIED with the denial marker, as upstream maps a
// confining provider's denial); reads are never fenced.
//
// harness/oracle's TestEditorTextsAreUpstreams runs the same calls through
// upstream's published editor on its bare provider and through this one,
// and compares every answer and error text.
//
// # Departures
//
// A clip that would split a surrogate pair leaves the pair out whole (Go
// text cannot hold the lone surrogate JavaScript keeps). A listing reads
// directories directly (not through an abortable provider listing); an
// entry that cannot be stat'ed is "?".
//
// # Imports
//
// fsobserve, pipeline, sandbox, internal/jsjson, internal/jstext and
// tools/toolreg; never stack or harness.
package editor
