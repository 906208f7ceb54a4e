// Package compile turns a run_code program (the body of an async TypeScript
// function, code-mode.md §4) into the JavaScript body the Node runtime runs,
// in-process with esbuild (no npm toolchain at run time).
//
// The program is wrapped as upstream wraps it ("async function
// __dsh_program__() {\n" + code + "\n}"), transformed with esbuild's
// TypeScript loader, and the body is sliced back out of the output. Only
// erasable syntax is accepted, as in Node's strip-only mode: esbuild itself
// rejects namespaces, "import x =" and "export =" inside a function body;
// this package rejects the two non-erasable constructs esbuild would
// compile there, enum declarations (const enum included; declare enum is
// erased) and constructor parameter properties. Angle-bracket type
// assertions (<T>x), which Node rejects, are erased (a deliberate leniency).
//
// A rejected program is an [*Error] whose message is framed like Node's
// strip-only diagnostic: "  x <text>", then the offending line with its
// number and a caret line. Line numbers count the one-line wrapper, as
// upstream's do.
//
// It imports esbuild's pkg/api and the standard library only; it must not
// import pipeline, sandbox or anything under harness.
package compile
