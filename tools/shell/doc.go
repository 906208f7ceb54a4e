// Package shell is the persistent bash tool (upstream's
// tool-bash-persistent over terminal-bash): one interactive bash per agent
// (bash --noprofile --norc -i) on a pseudo-terminal that is its controlling
// terminal, its state (current directory, variables) kept across the
// agent's calls, which run one at a time. Schema, description and texts
// are upstream's (VERBATIM).
//
// # A call
//
// The shell starts on the agent's first call, in the session's cwd, with
// upstream's terminal environment (TERM=dumb, PAGER=cat, PS1 "dsh> " and a
// PROMPT_COMMAND that prints the private prompt marker OSC 133;D before
// each prompt); once at its prompt, echo is turned off ("stty -echo"). A
// command is typed wrapped between a start and an end marker with a random
// nonce (upstream's wrapCommand); what the terminal prints is sanitized as
// upstream's TerminalSanitizer does (escape sequences removed, CRLF and CR
// made LF) and kept bounded (10000 lines, 4 MiB: a lost head is
// upstream's "dropped by the terminal scrollback limit" note). The result
// is the text between the markers, clipped at MaxOutputChars UTF-16 units
// with upstream's "<response clipped>" note, and "[exit code: N]" for a
// non-zero status. A shell that ends answers what the command printed,
// "[shell exited: code N]" (or "[shell killed by signal: S]") and the
// reset message; a call past TimeoutMs (default 300000, the shell's start
// included) answers upstream's timed-out text with the partial output and
// resets the shell; an aborted call resets it and fails ABORTED. A reset
// hangs the terminal up (SIGHUP ends the shell and its jobs) and kills the
// shell's process group if it is still there after a second.
//
// # Confinement
//
// The shell is started through sandbox/spawn as bash's commands are: in
// danger-full-access directly, in a confined mode through the injected
// confiner (the stack's: Landlock in-process, the runner, bwrap), the
// whole shell confined under the call's policy (spawn.Request.Terminal
// gives it the terminal). A confined mode without a confiner fails closed
// (SANDBOX_UNAVAILABLE) and nothing starts. Each call resolves its policy:
// a shell started under another policy is closed and a new one started
// under the policy in force, so a command never runs under a mode other
// than its call's (ours: upstream refuses the sandbox/mode change itself
// while a persistent terminal is open).
//
// # Departures
//
// Upstream also settles a send when the foreground process waits for
// terminal input (its result is the output so far); here such a command
// runs until the call's timeout. Upstream reads its scrollback in pages of
// 1000 lines of at most 256 KiB each; here the bounded text since the call
// began is read whole.
//
// # Imports
//
// pipeline, sandbox, sandbox/spawn, internal/jsjson, internal/jstext and
// tools/toolreg; never stack or harness.
package shell
