// Package spill bounds what a tool result may put into the model's context:
// a result over the inline budget is saved whole to a session-private file and
// the model gets a head/tail preview plus a notice naming the file.
//
// # Budget
//
// Two budgets are supported, selected by [Config]:
//
//   - MaxInlineTokens (newer upstream; default bundle 12500): each text block
//     costs ceil(UTF-16 length / 4) + 4 estimated tokens; the result spills
//     when the sum exceeds the cap. The preview is head + "\n\n[...]\n\n" +
//     tail + "\n\n" + notice, blocks kept whole while they fit and an edge
//     block cut on a UTF-16 boundary (never inside a surrogate pair).
//   - MaxInlineBytes (August upstream; the recorded bash-spill session used
//     800): the UTF-8 byte length of the concatenated text decides; the preview
//     is head bytes directly followed by tail bytes (no gap marker), then
//     "\n\n" + notice, and the whole replacement is at most the cap.
//
// Omitting both disables spilling. The notice is VERBATIM:
//
//	(Omitted <n> bytes. Full formatted result stored at: <path>. Use read with offset/limit, or grep this path to search within it.)
//
// where n counts omitted UTF-8 bytes in both modes.
//
// # Skip rules
//
// The read tool never spills (reading a spill file would spill again), nor do
// nested calls (call.Parent != nil), results with a non-text block, or post-
// execute decisions other than accept. Error results spill like successes and
// keep IsError. When the store fails (no session, unwritable root) or the
// replacement would not fit, the original result is kept and a warning is
// logged: spilling never turns a success into an error.
//
// # Store
//
// [Store] writes <root>/session-<sha256(sessionId)[:12]>/<12 random hex>-<encodeSegment(name)>
// with the session directory 0700 and the file 0600, created exclusively. The
// root is configured (made absolute) or a private mkdtemp(<tmpdir>/dsh-spill-)
// created on first use.
//
// # Streaming
//
// [Policy.NewWriter] returns an io.Writer for outputs too large to hold: it
// buffers only while the output could still be inline, then streams every byte
// to the spill file keeping only a bounded head, and reads the bounded tail
// back from the file at Close, so a 1 GiB output spills in constant memory
// (about 1 MiB of peak RSS growth, at the speed of a plain read/write copy;
// see BenchmarkSpill1GiB).
//
// # Hooking
//
// [Policy.Listener] adapts the policy to a pipeline post-execute listener that
// calls next first; register it with PrependPostExecute (see [Policy.Hook]) so
// it transforms the final decision after every other listener (outermost).
//
// # Imports
//
// spill imports pipeline (the post-execute hook and the result shape); it
// must not import tools/..., stack or harness/... (test tooling).
package spill
