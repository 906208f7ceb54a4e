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
// to <mode>: <justification>" and only allowed-once returns the mode. [New]
// binds it to an approval service as an injectable [Func]. The granted mode
// is returned to the one call that asked; nothing stores it.
package escalation
