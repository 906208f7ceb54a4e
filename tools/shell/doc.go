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
// # A wait for input
//
// While a command runs, its send is polled every 50 ms as upstream's
// terminal-bash polls it (ready.go, stdin.go). The foreground waits for
// terminal input when the shell is back at its bare prompt without the
// end marker (a prompt marker since the send, exactly "dsh> " after it,
// quiet for a poll, the shell's group in front), or when, 150 ms after
// the send, a thread of the terminal's foreground process group is
// blocked reading descriptor 0 (/proc/<pid>/task/<tid>/syscall: a read of
// 0, a select or pselect with 0 in its read set, a poll or ppoll with a
// POLLIN entry for 0, an epoll set holding 0; the group in front when the
// send began counts only once it has left its wait). The call then
// answers the output after its start marker, and the shell and the
// waiting command are kept: the next call's line is typed to the waiting
// process, as upstream's is. Three seconds without output (three and a
// half after a prompt) begin the send's evidence again, as upstream's
// tool sends again after an idle settle. A process /proc does not let us
// read is not waiting; the poll runs beside the call's wait, so the
// call's deadline holds whatever the poll reads.
//
// # Confinement
//
// The shell is started through sandbox/spawn as bash's commands are: in
// danger-full-access directly, in a confined mode through the injected
// confiner (the stack's: Landlock in-process, the runner, bwrap), the
// whole shell confined under the call's policy (spawn.Request.Terminal
// gives it the terminal). A confined mode without a confiner fails closed
// (SANDBOX_UNAVAILABLE) and nothing starts.
//
// While a shell is open or starting, it holds upstream's sandbox-mode
// fence on its agent's session log (session.Log.AddCheck): a sandbox/mode
// event whose mode differs from the log's mode in force is refused with
// upstream's text ("cannot change sandbox mode from ... while persistent
// terminal sessions are open or being created; ...") and the log does not
// change, so the mode in force stays the shell's. The fence is put up
// before the policy the shell starts under is read again (adding it waits
// for an append in progress), and taken down when the shell is reset.
// Each call still resolves its own policy: a shell whose policy differs
// from the call's (one the fence does not hold: a call's own approval of
// full access, an appender that does not write through the agent's log)
// is closed and a new one started under the call's, so a command never
// runs under a policy other than its call's.
//
// # Departures
//
// Upstream reads its scrollback in pages of 1000 lines of at most 256 KiB
// each; here the bounded text since the call began is read whole. A shell
// restarts on a policy change that upstream's paths never make (see
// Confinement: upstream's shell keeps the policy it started under).
//
// # Imports
//
// pipeline, pipeline/session, sandbox, sandbox/spawn, internal/jsjson,
// internal/jstext, tools/toolreg and golang.org/x/sys/unix; never stack or
// harness.
package shell
