// Package pwsh is the model-facing pwsh tool in its two upstream shapes:
// the one-shot tool (dsh-tool-pwsh over dsh-pwsh-local: command,
// description, timeoutMs, workdir, run_in_background) and the persistent
// shell's (tool-pwsh-persistent: command only), with upstream's schemas
// and descriptions as the pwsh recordings pin them.
//
// # The body
//
// Where PowerShell runs ([Available]: upstream's probe), a call runs
// pwsh -NoLogo -NoProfile -NonInteractive -Command <command> in the
// session's cwd (or workdir), unconfined as upstream's local pwsh
// executor, and its result is rendered by bash's rules (package render).
// Where it does not (Linux CI has no pwsh, and upstream's suite skips these
// scenarios there), the composition serves the body from the recording
// (package served) and names it served. The persistent shell's state is
// not kept between calls here (ours: each call is a fresh pwsh), and a
// background start is refused.
//
// # Imports
//
// pipeline, render and tools/toolreg (the registration); never stack or
// harness.
package pwsh
