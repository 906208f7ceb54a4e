// Package options holds the options of the stack's areas: spill, hooks,
// the safety stack's tools (bash, jobs, files), the tools beyond it
// (session query, images, skills, file search, terminal, lsp, pwsh, the
// persistent shell, the editor, served bodies) and the parts of upstream's
// default profile a composition leaves out (Without).
//
// They are plain data: package stack composes from them and names each
// under its own name (stack.SpillConfig is [Spill], and so on), so a
// deployment writes stack.Config{Spill: stack.SpillConfig{...}}. A zero
// value keeps upstream's defaults or composes nothing, as each type says.
package options
