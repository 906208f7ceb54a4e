// Package sdk renders what the model reads about run_code: the tools:sdk
// system-prompt section (fixed instructions and a TypeScript declaration of
// every tool a program can call) and the tools:code-only sentence
// (upstream's texts). Each tool's argument type comes from its parameters
// JSON Schema and its result type from its output schema, by upstream's
// JSON Schema to TypeScript table ([Type]). Everything here is pure text:
// byte-stable for an unchanged tool set, independent of input order.
//
// It imports only the standard library and internal/jsjson; it
// must not import pipeline, sandbox or anything under harness.
package sdk
