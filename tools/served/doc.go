// Package served serves a tool's body from a recording: for a tool whose
// body needs the network or a program this machine lacks, [Wrap] keeps
// the tool's own registration (its schema, description, concurrency,
// prompt section, yield rule) and
// replaces only its body, which answers a call with the recorded result of
// the call with the same id, tool and arguments (content, meta, isError,
// {name, code}). Everything around the body runs for real: the schema
// check, hooks, approval, guards, spill and the session log. A call the
// recording does not hold fails.
//
// A run_code program's nested call reaches a served body through the
// nested-call bridge like any call. The program also receives the call's
// canonical value, which upstream logs only rendered: [NestedValue] finds
// the one value in the recording that the tool's own [Render] turns into
// the recorded content, and a nested call whose value the recording does
// not pin fails rather than hand the program a guess.
//
// A served body can never stand in for a tool of the safety stack (bash,
// read, write, edit, run_code and the job tools: the registrations whose
// toolreg.Tool.SafetyStack is set): Wrap refuses them, and so do the
// stack (for every registration a configuration names) and the replay's
// settings.
//
// # Imports
//
// pipeline, tools/toolreg (the registration it wraps) and internal/jsjson.
package served
