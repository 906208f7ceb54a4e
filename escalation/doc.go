// Package escalation decides one-shot sandbox escalations: a call the
// sandbox denied may be retried once with sandbox_permissions (a wider mode)
// and a justification, and the user approves it.
//
// # Widening
//
// [WiderModes] is the table: read-only → workspace-write,
// danger-full-access; workspace-write → danger-full-access; nothing is wider
// than danger-full-access. [Targets] is the schema enum.
//
// # Validation
//
// [CheckPairing] runs the three VERBATIM pairing checks in order.
// [PlanCommand] (bash) skips them when sandbox_permissions names the standing
// mode and ignores a blank justification sent alone; [PlanOperation] (file
// tools) applies them in full.
//
// # Approval
//
// [Approve] runs in order: a request for the current mode returns it with no
// prompt; a mode not strictly wider is refused; no approval service, no agent
// refuse; else the user is asked with the VERBATIM reason "escalate sandbox
// to <mode>: <justification>", every answerer seeing the call in the
// request's Escalation (tool, arguments, modes, justification; never
// audited), and only allowed-once returns the mode. [New]
// binds it to an approval service as an injectable [Func]. The granted mode
// is returned to the one call that asked; nothing stores it.
//
// # Opening a call
//
// [Opening] is the one opening every tool that confines uses (the bash tool,
// the file tools, the escalation sim, the tests): [DecodeArgs] reads the two
// fields (the tool words its own argument errors), [Opening.Open] resolves
// the standing policy, plans with the tool's rules, refuses a widening the
// tool cannot run ([Opening.Unconfined]), asks ([Opening.Escalate]; nil is
// New(nil): "no approval service is composed") and returns the standing
// policy with the granted mode.
//
// # Imports
//
// escalation imports pipeline (the call, the approver) and sandbox (the
// modes); it must not import harness/... (test tooling) or tools/... (the
// tools import it).
package escalation
