// Package cordis holds upstream's tool-cordis tools as the model and a
// run_code program see them: cordis_inspect_list, cordis_inspect_query,
// cordis_inspect_self, cordis_define, cordis_run, cordis_stop and
// cordis_undefine ([New], in upstream's registration order), with their
// schemas and descriptions as the recordings pin them, their output
// schemas (the value types run_code's SDK declares), and the tool:cordis
// system-prompt section ([PromptSection], order 115, the recorded text
// in prompt.md).
//
// Every body works on upstream's Cordis host: its dynamic plugin runner
// (define, run, stop, undefine and their state), its inspect providers and
// the JSDoc API catalog cordis_inspect_query answers from. This stack does
// not have that program, so the bodies refuse ([ErrNoHost]) unless the
// composition serves them from a recording (package served), which the
// replay report names; what cordis_run does to the session (the tools a
// running package registers) is composed for real by package dynamic.
// [Render] is each tool's own rendering of its value
// (upstream's output.render, after the output-schema check): the inspect
// tools print JSON.stringify(value, null, 2), the others one line. A
// replay uses it to find the value a run_code program received from a
// served nested call.
//
// Not built: the @pluginId reference context upstream's tool-cordis enters
// at a pre-step when a user message names a dynamic plugin.
//
// # Imports
//
// pipeline, pipeline/argschema (the output-schema check), internal/jsjson
// and tools/toolreg (the registrations).
package cordis
