// Package htmlreport writes the dsh-replay HTML report: one self-contained page
// (inline CSS and script, no network) per run.
//
// # Page
//
// The replay results are embedded as JSON in a <script type="application/json">
// element; the page's script renders, per recording, a verdict badge and each
// turn as a timeline of projected events (tool call, approval asked and decided,
// tool result, runtime context, turn end), the recording on the left and the
// replay on the right. Mismatching rows are highlighted and list every differing
// field (path, expected, got). The script computes each verdict from the
// embedded comparison itself, so a browser test of the rendered page checks the
// data and the script together.
//
// # Stable hooks
//
// After the script ran: each recording is a section.recording with
// data-name and data-verdict (match, mismatch, error), and a div.served
// with data-served (space-separated) when tools' bodies were served from
// the recording; #summary has data-match,
// data-mismatch and data-error counts; mismatching rows have class mismatch.
//
// # Imports
//
// Test tooling: it imports harness/replay and harness/replay/projection
// only; no product package imports it.
package htmlreport
