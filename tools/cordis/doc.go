// Package cordis holds the model-facing cordis_inspect_query tool
// (upstream's tool-cordis): its schema and description as the recordings
// pin them. Its answers are JSON.stringify({platform, provider, method,
// data}, null, 2) with data generated from upstream's JSDoc API catalog of
// its Cordis host, which this stack does not have: the body refuses
// ([ErrNoCatalog]) unless the composition serves it from a recording
// (package served), which the replay report names.
//
// The other cordis_* tools (define, run, stop, undefine, inspect_list,
// inspect_self) are not composed here.
//
// # Imports
//
// pipeline only.
package cordis
