// Package htmlreport writes the dsh-replay HTML report: one self-contained page
// (inline CSS and script, no network) per run. The page is page.html,
// embedded; [Write] puts the results in it.
//
// # Page
//
// The replay results are embedded as JSON in a <script type="application/json">
// element; the page's script renders them. The page opens with a summary
// table, one row per recording in the report's order: recording (a link to
// its section), verdict, events matched, first difference
// (replay.Result.FirstDifference) and served tools (replay.Result.Served).
// Clicking a column header sorts the rows by it (verdict: errors first, then
// mismatches; events: the fraction matched; ties in name order); clicking it
// again reverses the order. Then, per recording, a verdict badge and each
// turn as a timeline of projected events (tool call, approval asked and
// decided, tool result, runtime context, turn end), the recording on the left
// and the replay on the right. Mismatching rows are highlighted and list
// every differing field (path, expected, got). The script computes each
// verdict from the embedded comparison itself, so a browser test of the
// rendered page checks the data and the script together.
//
// The timeline is built by functions of the script, timeline(rows, kids) of
// the events and eventRow(p) of one compared position. A recording's child
// sessions (replay.Result.Children) are nested timelines: each child's block
// (file, the call that started it, verdict, events matched, flags, notes and
// its own timeline) follows the parent's tool/call row of that call (at the
// end of the parent's timeline when no row is that call's), a grandchild
// inside its parent's block. A recording's verdict counts its children's.
//
// # Stable hooks
//
// After the script ran: each recording is a section.recording with
// data-name and data-verdict (match, mismatch, error) and id
// recording-<n> (1-based, report order); #summary has data-match,
// data-mismatch and data-error counts; mismatching timeline rows have class
// mismatch. Each child session is a div.child with data-file
// (session.<n>.jsonl), data-call (the parent's call id) and data-verdict. The summary table is table#overview: each header th has
// data-col (name, verdict, events, first, served) and aria-sort (ascending,
// descending or none); each tbody row has data-name and data-verdict.
//
// # Imports
//
// Test tooling: it imports harness/replay and harness/replay/projection
// only; no product package imports it.
package htmlreport
