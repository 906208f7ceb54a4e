// Package pipelinetest is test support for the pipeline, in the manner of
// sandbox/sandboxtest: the scope tree the tests of the pipeline and of
// approval both stand on, and a registry holding the tools under test.
//
//	s := pipelinetest.NewScopes(t, a, b, c) // preset ← a, b; a ← c
//	svc.In(s.Scope("preset"))               // "global" (nil), "preset", "a", "b", "c"
//
// [NewScopes] builds the tree upstream's roster builds, one level deeper: a
// preset standing scope with agents a and b bound under it, and agent c bound
// under a (a chain long enough to show that registrations and events flow
// up). The caller makes the agents, with or without session logs.
//
// [Registry] is a fresh registry holding a tool set, the start of a tool's
// tests.
//
// # Imports
//
// pipelinetest imports package pipeline only. Only _test.go files and the
// test tooling under harness/ import it; no product package does.
package pipelinetest
