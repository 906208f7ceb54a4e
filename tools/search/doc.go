// Package search is the model-facing file search tools glob and grep
// (upstream's tool-fs-search): each runs ripgrep (Debian's rg; upstream
// ships its own) with a fixed argv, no shell, in the calling session's cwd,
// unconfined as upstream's search spawn is, and renders upstream's texts.
//
// # glob
//
// rg --no-config --files --glob=<pattern> --sort=modified --no-ignore
// --hidden, two exclusions per VCS directory (.git .svn .hg .bzr .jj .sl:
// --glob=!**/<n> and --glob=!**/<n>/**), then "-- <path>" when given. The
// paths, oldest modification first, are shown relative to the workdir.
// Within the cap they are the text joined by newlines ("No files found" for
// none). Over the cap the page is the head, or with
// SampleOverCapGlobResults a round-robin across the top-level entries
// relative to the search root (every entry a slot before any a second,
// grouped by entry), followed by
//
//	(Showing <k> of <n> paths<basis> <recovery>)
//
// where basis is "." for a head or a flat result and otherwise ", sampled
// across <shown> of the <total> top-level entries this pattern matched
// instead of taken in modification-time order." plus " Narrow path to
// inspect a specific subtree." when some entries got no slot; recovery is
// "Full sorted result stored at: <locator>. <hint>" when Config.Save kept the
// whole list, else "The complete result could not be saved; narrow pattern
// or path to see more." The meta is {shape:"paths", paths, truncated, total}.
//
// # grep
//
// rg --no-config --json --regexp=<pattern> [--glob=<include>] [-- <path>];
// the match records become "Found <n> match(es)", then per file (first-seen
// order) the path and "Line <n>: <text>" lines, each text cut to
// GrepMaxLineBytes at a UTF-8 boundary with " (line truncated)". Over
// GrepMaxMatches: "Found <k> of <n> matches", the kept matches and
// "(Full grep result stored at: <locator>. <hint>)" or "(The complete result
// could not be saved; narrow pattern, path, or include to see more.)". The
// meta is {shape:"matches", files:[{path, matches:[{lineNumber, line}]}],
// truncated, total}. An include must be one positive glob.
//
// # Failures
//
// SearchError with upstream's codes and texts: exit 1 of rg is no result,
// any other exit is SEARCH_INVALID_PATTERN ("<tool> pattern rejected by
// ripgrep: <stderr>") when rg's stderr names a regex or glob parse error,
// else SEARCH_FAILED ("<tool> search failed (exit <n>): <stderr>"); a
// cancelled call ends rg's process group and answers SEARCH_ABORTED; raw
// output past RawOutputMaxBytes is SEARCH_RAW_OUTPUT_OVERFLOW.
//
// Departures (docs/stack.md): glob re-sorts rg's listing by modification
// time over the whole list ([SortByModified]: upstream's rg 15 sorts so,
// Debian's rg 13 only within each directory); grep's file order is rg's, which searches in
// parallel as upstream's does, so it may differ between runs with several
// files; the complete result of a capped call is saved by the body
// (upstream: by a post-execute listener, after the other listeners), and
// upstream's 30 s tool timeout is not enforced here.
//
// # Imports
//
// pipeline and tools/toolreg (the registrations) only; never stack,
// sandbox or harness.
package search
