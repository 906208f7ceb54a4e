// Package lsp is the model-facing lsp tool (upstream's tool-lsp over
// dsh-lsp-stdio): a query (goToDefinition, findReferences,
// goToImplementation, hover) at a one-based line and UTF-16 character of a
// file goes to the language server configured for the file's extension,
// over stdio JSON-RPC 2.0 with Content-Length framing, for real.
//
// # Servers
//
// A server starts on its first query, in the workspace, through
// Config.Confine when set (the stack confines it like a workspace-write
// command: a recording's fixture server is recording-supplied code), and
// is initialized once (rootUri the workspace, UTF-16 positions); each
// queried file is opened (full text) and re-sent whole when it changed.
// A request it leaves unanswered ends at Config.Timeout; a server that
// died is started again on the next query; Close shuts every server down
// (shutdown, exit, then its process group is killed).
//
// # Texts
//
// Locations (Location, Location[] or LocationLink[]) render
// "<path>:<line>:<character>" one per line, 1-based, the path relative to
// the workspace when inside it, at most Config.MaxLocations, then (VERBATIM
// from the recording) "… <n> more location omitted (limit <k>)." ("locations"
// for several). Ours, since no recording shows them: "No results." for an
// empty answer, a hover's contents joined by blank lines, and the texts of
// a file without a server, an unreadable file, a position that is not a
// positive integer, and a server that failed.
//
// # Imports
//
// pipeline and tools/toolreg (the registration) only; never stack, sandbox
// or harness.
package lsp
