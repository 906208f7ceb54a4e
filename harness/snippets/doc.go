// Package snippets resolves the --8<-- include lines of a documentation page,
// the way mkdocs' pymdown snippets extension reads them, and checks them.
//
// # Include forms
//
// A page line whose first non-blank text is --8<-- includes a file. Paths are
// slash-separated and relative to the repository root:
//
//	--8<-- "snapshots/txt/profiles.txt"             whole file
//	--8<-- "snapshots/txt/landlock-runs.txt:1:28"   lines 1 to 28, 1-based, inclusive
//	--8<-- "snapshots/txt/landlock-runs.txt:46"     line 46 to the end
//	--8<-- "sandbox/backends.go:backend-chain"      a named section
//
// A named section is marked in the source with comments, as in pymdown
// snippets:
//
//	// --8<-- [start:backend-chain]
//	...
//	// --8<-- [end:backend-chain]
//
// Marker lines are never part of the included text, in any include form. The
// included lines are indented like the include line, so an include inside an
// indented block (an admonition) stays inside it. Included text is not
// searched for further includes.
//
// # Errors
//
// Every problem is an [*Error] naming the page, the page line and the include:
// a malformed include line, a path outside the root, a missing file, a range
// past the end of the file, a missing, duplicated or unclosed section. [Check]
// also compares each include with the fresh output of a run ([Source.Fresh]):
// an included effect file whose selected lines differ from what the stack
// produces now is stale, and the error shows the first differing line.
// Functions collect all problems of a page ([Errors]) rather than stopping at
// the first.
//
// # Use
//
// dsh-sim -check runs [Check] on docs/tools.md after regenerating the effect
// files in memory; dsh-sim -render runs [Render] to write the page with every
// include expanded.
//
// # Imports
//
// Test tooling: it imports harness only; no product package imports it.
package snippets
