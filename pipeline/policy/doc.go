// Package policy resolves the sandbox policy of a call from the session log
// and renders the runtime-context text the model sees.
//
// # Resolution
//
// [Resolver.Resolve] folds the log at the moment of the call (no process
// state): mode = the mode an escalation approved for this one call > the last
// sandbox/mode event > the configured default (read-only); root = the
// session header cwd > the configured root. Roots keep their
// execution-world spelling (cleaned, not realpathed); a non-absolute root is
// rejected with the VERBATIM "sandbox-policy: workspace root must be an
// absolute execution-world path".
//
// # Presets
//
// [Presets] pairs the two knobs: read-only (read-only, ask), workspace-write
// (workspace-write, ask), danger-full-access (danger-full-access, never);
// anything else derives to [Custom]. [Resolver.SwitchPreset] appends
// permission/preset, sandbox/mode and the approval policy only where they
// differ from the current values.
//
// # Runtime context
//
// [Sections] and [RenderSnapshot] produce the VERBATIM snapshot: the header
// "Current runtime context. This snapshot supersedes earlier runtime-context
// snapshots.", then the sandbox:policy and approval:policy sentences, joined
// by blank lines. [SnapshotData] is the user/message data exactly as the
// recordings hold it. [Resolver.SyncContext] appends a snapshot only when
// its bytes differ from the last one in the log.
//
// # Imports
//
// policy imports pipeline, pipeline/approval, pipeline/session, sandbox
// (the modes and the policy it resolves) and internal/jsjson (the workspace
// root quoted as JSON.stringify quotes it); it must not import tools/...,
// stack or harness/... (test tooling).
package policy
