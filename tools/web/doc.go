// Package web holds the model-facing web_fetch tool's definition
// (upstream's tool-web): its schema, description, prompt section and
// argument check ("url must be a non-empty string"). Its body needs a
// fetch provider and, in upstream's suite, a loopback fixture server whose
// module is not published, with HTML converted to Markdown by turndown:
// neither is built here, so the body refuses ([ErrNoFetcher]) unless the
// composition serves it from a recording (package served), which the
// replay report names.
//
// # Imports
//
// pipeline and tools/toolreg (the registration) only.
package web
