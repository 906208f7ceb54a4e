// Package dynamic registers the tools a session's dynamic Cordis package
// registers at run time: cordis_define keeps a package's host half (its
// code), cordis_run evaluates it and registers the tools it registers
// (harness.registerTool(ctx, harness.defineTool(spec))) for every agent,
// cordis_stop and cordis_undefine unregister them ([Host], wrapping those
// tools' bodies, whatever answers them).
//
// The host code is JavaScript the session wrote: it runs nowhere but in
// run_code's Node runtime, confined by the stack's confiner under the
// policy of the call that runs it ([Runner]), the code handed to the
// program as a JSON string and compiled by the Function constructor
// inside it, never spliced into the program's text (a call's arguments
// too reach it as a JSON string). Its definitions are checked before
// anything registers ([Check]): a model-facing name, a description, an
// execute function, parameters in upstream's schema DSL limited to
// {type, description, required: true, enum} of string, number, integer
// or boolean, an output {schema, render} with a schema of one of those
// types. A definition that fails, a name taken, or a host code that
// throws registers nothing, and cordis_run's call fails naming why. A
// registered tool is an ordinary pipeline tool: its calls go through the
// schema check, hooks, approval, guards, spill and the session log as
// every other tool's, and its body runs execute(args) and
// output.render(args, value) in a fresh confined Node child of its own,
// whose results must be lossless JSON data and whose value must satisfy
// the output schema (upstream's checks and messages).
//
// # What an attacker's package cannot do
//
// The host code and the definitions are the session's (a recording's, a
// model's): an attacker's. A dynamic tool never takes a name the session
// knows a tool by, in any case ([CheckName], [Host.Taken]): the stack
// passes every tool its composition constructed (those Without left out
// too: a read-only step's allowlist trusts "read" by name) and the names
// delegation registers in a child's scope; run_code and the running
// dynamic tools are taken always. What a session may hold is bounded
// ([MaxCodeBytes], [MaxPackages], [MaxToolsPerPackage], [MaxTools],
// [MaxDescriptionBytes], [MaxParameters], [MaxEnum], [MaxResultDepth]):
// past a bound the call fails naming it. Package ids are kept as a pair,
// cordis_undefine forgets the plugin's packages, and the lifecycle
// actions run one at a time, so two agents' runs never leave a tool that
// no stop removes. The program declares no tool binding (host code calls
// no tool), and its child has only PATH, TEMP and TMP of the agent's
// environment.
//
// # Departures
//
// Upstream's host runner accepts more of its schema DSL (nested objects,
// arrays, oneOf, raw JSON Schema), client halves, services and events; a
// package using them is refused here. Upstream bounds none of the above,
// refuses only run_code's name (and an exact duplicate), accepts enum
// values of any type and applies a package once: here every call of a
// dynamic tool evaluates the host code again in a fresh child (nothing a
// call does outlives it). docs/stack.md, Departures, names each.
//
// # Imports
//
// pipeline, pipeline/argschema (the output-schema check), sandbox,
// sandbox/spawn, tools/code (run_code's reserved name),
// tools/code/noderuntime (the runtime), tools/cordis (the lifecycle tools'
// names) and tools/toolreg.
package dynamic
