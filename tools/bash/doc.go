// Package bash is the model-facing bash tool: argument validation, the
// per-call sandbox policy with one-shot escalation, confinement through the
// injected confiner (Deps.Confiner), foreground runs whose timeout promotes
// the command to a background job, and run_in_background (the job tools are
// package tools/jobs). [New] returns its registration (tools/toolreg): a
// tool of the safety stack whose call yields to the host unless it starts
// a background job. Its description and parameters are upstream's as the
// recordings pin them, with upstream's variants for an executor that does
// not confine and for background execution disabled.
//
// # Execute order
//
// A call runs these steps, and nothing is spawned before the last one:
//
//  1. validate command, description and timeoutMs (VERBATIM texts);
//  2. open the call through escalation.Opening with the command rules:
//     the standing policy of the call (injected resolver); the escalation
//     plan (escalation.PlanCommand: a request for the standing mode is a
//     no-op, a blank justification alone is ignored, otherwise the pairing
//     checks); with both fields, the composition guard (ErrNoEscalationHere)
//     and then the injected escalation.Func (the user is asked); the final
//     policy is the standing policy with only its mode replaced by the grant
//     (for this one call; nothing is stored);
//  3. workdir from the standing root (absolute kept, relative joined);
//  4. background (acknowledged at once) or foreground.
//
// # Confinement and classification
//
// Every command runs through sandbox/spawn with the injected
// spawn.Confiner (the stack's *chain.Confiner: Landlock applied from a
// restricted thread of this process, or the platform chain's runners, bwrap
// and landlock-run, wrapping the argv). danger-full-access runs
// "bash -c <command>" directly and never reaches the confiner. A confined
// mode asks the confiner for the call (with the call's context; its errors,
// such as SANDBOX_UNAVAILABLE, propagate: nothing runs unconfined, and
// without a confiner a confined mode fails closed) and spawn classifies the
// settled run: runner failure (foreground: the call fails with
// SANDBOX_UNAVAILABLE; background: the runner-failure marker), then denial
// (the denial marker, plus the escalation hint when escalation is
// advertised), then the command's own exit code. The process itself is not
// tied to the call's context, so it can outlive the call as a job.
//
// # Background starts and ids
//
// run_in_background starts a job of the registry: its admission bound is
// checked before anything spawns (the refusal is upstream's text, and the
// refused command never runs), and the job takes an id only once its start
// returned. A foreground call is an unregistered run: it takes no number.
//
// # Foreground timeouts and aborts
//
// With promoteOnTimeout (default) and a job registry, a foreground command
// still running at its timeout is adopted by the registry (taking the next
// id) and keeps running; the result says so and a completion notice follows.
// Without promotion (upstream's recorded version), or when the registry
// refuses, the process group is killed (SIGTERM, then SIGKILL) and the result
// carries "[timed out after <ms>ms]" and the signal. A call aborted while its
// command runs terminates the whole process group (SIGTERM, SIGKILL after
// the grace for any member left) and answers "tool call aborted" (ABORTED)
// only once no member is alive.
//
// # Imports
//
// The bash tool imports escalation, pipeline, render, sandbox,
// sandbox/spawn, tools/jobs and tools/toolreg (its registration); it must
// not import stack (which composes it) or harness/... (test tooling).
package bash
