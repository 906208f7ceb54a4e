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
// inside it, never spliced into the program's text. Its definitions are
// checked before anything registers ([Check]): a model-facing name, a
// description, parameters in upstream's schema DSL limited to
// {type, description, required: true, enum} of string, number, integer
// or boolean, an output schema of one of those types. A definition that
// fails, a name taken, or a host code that throws registers nothing, and
// cordis_run's call fails naming why. A registered tool is an ordinary
// pipeline tool: its calls go through the schema check, hooks, approval,
// guards, spill and the session log as every other tool's, and its body
// runs execute(args) and output.render(args, value) in a fresh confined
// Node child of its own.
//
// Upstream's host runner accepts more of its schema DSL (nested objects,
// arrays, oneOf, raw JSON Schema), client halves, services and events; a
// package using them is refused here (docs/stack.md, Departures).
//
// # Imports
//
// pipeline, sandbox, sandbox/spawn, tools/code/noderuntime (the runtime),
// tools/cordis (the lifecycle tools' names) and tools/toolreg.
package dynamic
