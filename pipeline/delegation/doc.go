// Package delegation holds what upstream's in-process delegation writes and
// says when an agent starts a child agent, as pure
// functions over the session log:
//
//   - [ChildDepth]: the child's depth and the VERBATIM depth errors;
//   - [CaptureFrom]: what the child inherits, read from the parent's log
//     before anything else happens: the parent's explicit sandbox override
//     (the last sandbox/mode event, never the deployment default, never a
//     one-shot escalation grant) and the approval pin (never, whenever an
//     approval service is composed; the parent's own policy is not read);
//   - [ChildHeader]: the child's session header (origin "subagent",
//     parentSession, agentPreset, delegationDepth, the parent's cwd);
//   - [Seed]: the child log's first events, sandbox/mode {mode, source:
//     "delegation"} (when captured) then approval/policy {policy: "never",
//     source: "delegation"} (when pinned), so the child's policy folds from
//     its own log;
//   - [ContextText]: the VERBATIM subagent:delegation runtime-context
//     sentence (order 120, after sandbox:policy 110 and approval:policy 115);
//   - [Descriptor]: the subagent/descriptor event, which persists the tool
//     filter.
//
// A read-only workflow step ([ReadOnlyDenial]) is our extension: upstream's
// workflow agent() has no such option. The composition (stack) builds it as
// a child-scoped restriction plus a child-scoped guard, registered before
// the child is published, so nothing registered later can re-allow a write.
//
// It must not import harness/..., tools/... or stack.
package delegation
