// Package compile turns a run_code program (the body of an async TypeScript
// function) into the JavaScript body the Node runtime runs,
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
// A rejected program is an [*Error] whose message is the reason alone, as
// Node's stripTypeScriptTypes words it from 22.19 on (upstream's range
// ^22.19.0 || >=24; checked against the oracle's Node 22.23.5: "TypeScript
// enum is not supported in strip-only mode", no source frame). Its line
// counts the one-line wrapper, as upstream's do. For invalid syntax the
// reason is esbuild's, not SWC's ("Unexpected \";\"" where Node says
// "Expression expected").
//
// It imports esbuild's pkg/api and the standard library only; it must not
// import pipeline, sandbox or anything under harness.
package compile
