// Package instructions is upstream's workspace instructions
// (agent-instructions): the AGENTS.md and CLAUDE.md files that apply to the
// session's directory, as the model gets them.
//
// # Discovery
//
// The project root is the nearest ancestor of the session cwd holding a
// root marker (default .git; the cwd when none does). The candidates are
// the user-global AGENTS file in $DSH_HOME (shown as "$DSH_HOME/" and its
// name), then, from the root down to the cwd, in each directory the AGENTS
// and CLAUDE files and their ".local" variants (DefaultCandidates,
// DefaultLocalCandidates).
// A candidate counts when it is a file (a symlink counts by its target); it
// is read as UTF-8 up to maxSourceBytes (a bigger one is skipped). Within a
// directory a candidate whose trimmed text repeats an earlier one's is
// dropped (a symlinked sibling collapses into its target).
//
// # Messages
//
// The baseline, entered with the first step, is one text
// "<system-reminder>\n<intro>\n\nInstructions from: <path>\n\n<text>…\n</system-reminder>";
// a message over maxBytes drops the broadest files first, then cuts the
// most specific one, and says so in a budget line. A later file touch (a
// successful read, write or edit) projects the instructions of the
// directories between the cwd and the touched file: one message of
// "Additional instructions from: <path>" sections (set), "Updated
// instructions from: <path>" (replace) or "Instructions removed: <path>"
// (remove) for what changed since the visible messages said it. Every
// literal "</system-reminder>" in a framed body (paths too) becomes
// "<\/system-reminder>". A message's source is {kind "agent-instructions",
// form "instructions", baseline and baselineIdentity on a baseline, and
// changes: per file {action, scope "<dir>\x00<name>", path, digest (SHA-1
// of the text)}}. A baseline that is no longer visible (compacted away) is
// entered again with the next projection.
//
// [Loader.Compose] decides the message from what the session shows; the
// agent loop (package replay) owns the inbox and the log.
//
// # Imports
//
// Test tooling: the standard library and internal/jsjson (JavaScript's
// trim); no product package imports it.
package instructions
