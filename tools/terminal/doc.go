// Package terminal is the persistent terminal (PTY) tools terminal_open,
// terminal_send, terminal_read, terminal_signal, terminal_close and
// terminal_list (upstream's dsh-terminal registry and tool-terminal) over
// the deterministic fake shell backend of upstream's pty snapshot
// ([FakeShell]; no process runs): sessions "pty-<n>" per registry, each
// visible to the agent that opened it only.
//
// # Texts
//
// From the recording (VERBATIM): open answers "started terminal session
// <id> (<name>) [type: <type>]\n" and the motd (the prompt "dsh> "); a send
// answers the viewport (the typed text, a newline, the output, the next
// prompt), "\n[wait: <reason>]" and "\n[session: <status>]", and over
// Config.MaxResultBytes the suffix gains "\n[output truncated]" while only
// the viewport's tail that fits is kept (the meta keeps the whole
// viewport); a read answers the page's lines and "\n[lines: <start>-<end>
// of <total>]"; an unknown id is "unknown PTY session <id>", a plain error;
// close answers "closed terminal session <id>"; an empty list
// "(no terminal sessions)". Upstream's registry texts for a foreign
// session, an unknown backend type and a duplicate or empty name are kept.
//
// Ours, since no recording shows them: the list line of a session (its
// open label and "[session: <status>]"), the signal answer, what the fake
// shell prints for commands but printf, echo and exit, and the refusal of
// a background send (upstream hands it to the job registry).
//
// # Imports
//
// pipeline and tools/toolreg (the registrations) only; never stack or
// harness.
package terminal
