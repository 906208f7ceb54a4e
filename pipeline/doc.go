// Package pipeline is the tool-call pipeline: a registry of tools and the
// stages every call passes through, in a fixed order, with one kind of
// authority per stage.
//
// # Stages
//
//  1. Creation: the call's arguments are a detached, frozen copy ([NewCall]);
//     arguments that are not lossless JSON ([LosslessArgs]: a -0 or a
//     number that overflows to ±Infinity anywhere, declared field or not)
//     end the call with the VERBATIM (upstream's text, byte for byte;
//     docs/README.md, Words) "tool execution arguments must be losslessly
//     JSON-serializable", no code. The model's text becomes arguments as
//     upstream's loop reads it ([ParseArguments]: empty is {}, text that is
//     not JSON a string, which the schema check then refuses).
//     A call whose signal is already done ends as ABORTED_BEFORE_DISPATCH.
//  2. tools/pre-execute: a waterfall of [PreExecute] listeners with next().
//     The first registered (or last prepended) listener is the outermost and
//     has total authority over the listeners inside it. Four decisions:
//     allow, deny(reason, info?), cancel, ask(reason?, displayReason?). An
//     unknown kind is an error, never an implicit allow.
//  3. Approval, only for ask, through the mounted [Approver]; only
//     allowed-once continues. Texts per outcome are VERBATIM (upstream's).
//  4. Guards ([Guard]): after every listener and approval allowed the call;
//     veto only, the first reason denies, nothing can overturn it.
//  5. tools/execute wrappers ([Wrapper]) around the tool body: [Timeout],
//     [Retry], [Meter]. The caller's cancellation is fused into the body's
//     context whatever context a wrapper passes on.
//  6. The tool body ([Tool].Run), which first checks the arguments against
//     the tool's Parameters (pipeline/argschema, upstream's defineTool):
//     violations fail the call as "invalid arguments: <violations joined by
//     "; ">" (ToolArgsError/INVALID_ARGS), no event of their own; a tool
//     without Parameters is not checked. A schema outside the subset cannot
//     be registered.
//  7. tools/post-execute ([PostExecute]): accept (optionally replace
//     content) or block. Denials and cancellations pass through it too.
//  8. tools/result ([ResultObserver]): exactly one notification per call.
//
// # Fail closed
//
// A listener, guard, wrapper, approver or body that returns an error or
// panics never lets a call through: the panic is recovered and the call ends
// with "Error: <message>" (stage errors skip post-execute, as upstream's
// final results do). [Registry.Execute] never panics.
//
// # Frozen arguments and identity
//
// What the log recorded is what runs. Stages read arguments through
// [Call.Args] (a copy) or [Call.DecodeArgs]; a pre-execute decision that
// carries different arguments fails the call with [ErrArgsFrozen]. A call's
// identity (call id, root call id, name, agent, parent, the caller's signal)
// is set by [NewCall] or [NewSubCall] and read through getters only, as
// upstream's readonly fields: no stage can change it. Results handed to
// wrappers, post-execute listeners and observers are copies.
//
// # Cancellation
//
// Cancellation only replaces successes: a success produced after the caller
// cancelled becomes "tool call aborted" (ABORTED) when the body ran, else
// "tool call aborted before dispatch" (ABORTED_BEFORE_DISPATCH); denials,
// tool failures and TOOL_TIMEOUT are kept. The cancel decision ends the call
// as ABORTED_BEFORE_DISPATCH and still passes through post-execute.
//
// # Coded errors
//
// Upstream renders every thrown error to the model as "Error: <message>" and,
// only when the error carries a code, records {name, code} beside the result
// ([ResultError.Info]). An [*Error] is such a code-carrying error, and so is
// any error implementing [Coded] (sandbox.UnavailableError); a plain Go error
// renders its message and carries no info. [CodeOf] finds the first coded
// error in a chain, [HasCode] tests for one code, [ErrorMessage] extracts the
// model-facing message of any error value. The coded error lives here, with
// the result shape it fills, so every layer (tools, file observation,
// sandbox callers) reaches it without a package of its own.
//
// # Scopes
//
// Every [Agent] has a [Scope]; standing scopes ([NewScope], an agent
// preset's) sit above agents' scopes ([Scope.Bind], once; cycles refused with
// upstream's VERBATIM texts). [Registry.In] is a scope's registration surface
// (upstream's agent.ctx): listeners, guards, wrappers, observers and tool
// restrictions registered through it apply to calls of agents whose scope is
// that scope or below it, never above or beside it; agentless calls reach
// only global registrations. Listeners keep one list in registration order,
// global and scoped alike. Guards run global first, then each scope of the
// calling agent's chain farthest first, so the nearest scope has the last
// word; a scoped deny is as final as a global one. [Scope.End] removes every
// registration made through the scope; a call of an agent whose chain holds
// an ended scope is refused before any stage (our rule: upstream drains an
// agent before disposing its scope, so no call can run with its guards
// gone). A call object runs once: a second Execute of it is refused.
//
// A scope may register tools of its own ([Scoped.Register], upstream's
// agent.ctx tools.register): its agent and the agents below it see them
// after the global tools (shadowing a global one of the same name for their
// calls), the scope's own restrictions do not hide them, an ancestor's do,
// and they go when the scope ends. A continuable child's report tool is
// one.
//
// # Scheduling nested calls
//
// [Registry.ExecuteStaged] runs the same stages and calls back twice: when
// the prepare stages (pre-execute, approval, guards) are over, and before
// post-execute (the commit). run_code's scheduler uses them to start its
// calls' prepare stages one at a time and to commit in submission order.
// [Tool.ConcurrencySafe] and [Tool.OutputSchema] are read only by run_code.
//
// # Simplifications
//
// Hook lists are snapshotted per call, so a guard added during a guard pass
// applies from the next call. next() may be called more than once; each call
// re-runs the inner chain. Post-execute cannot replace a result's value (tools here have
// no render step to rebuild content from a value).
//
// # Imports
//
// pipeline imports pipeline/session (the log a call's agent writes) and
// nothing else of this module: not sandbox/..., not tools/..., not stack, not
// harness/... (test tooling). Everything else stands on it.
package pipeline
