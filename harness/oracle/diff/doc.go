// Package diff is differential testing of our stack against upstream's own
// code: generated model scripts run through upstream (the oracle, package
// harness/oracle), which makes a recording of each, and every recording is
// then replayed through our stack (package harness/replay).
//
// # Generating
//
// [Generate] makes case i of a seed: the same script on every machine (a PCG
// stream seeded with seed and i). A case has a profile (bash, jobs, fs,
// byte-order marks, escalation, hooks, code, session query, spill,
// cancellation, a missing runner, delegation, turns, tools, JavaScript
// values, argument text, lifecycle hooks, children from run_code,
// Retry-After), the overlay
// switches that profile needs and two to six moves: tool calls with
// arguments drawn from palettes of edges (timeouts that are fractions of a
// millisecond, zero, negative or strings; output around the spill bound in
// one- to four-byte characters; files with CRLF, byte-order marks, long
// lines; malformed arguments; hook configs of both dialects with every kind
// of decision; run_code values and awaited nested calls; session-query
// arguments the checks refuse; children that run tools and answer, refused
// delegations, depth caps, workflows; todo lists, globs and greps,
// instruction files), or, in the turns profile, prompts whose turns end
// every way a turn ends (a text, an empty reply, max-tokens, an error finish
// retried or not) under UserPromptSubmit and Stop hooks, or, in the
// retry-after profile, prompts whose failures carry every kind of
// Retry-After (1e999 played from replay.override.json). [Areas] names what
// the generator explores; a test counts every area over a few hundred cases.
// [GenerateHeadless] makes the headless profile's cases (one task, no
// answers, a permission mode), which a [Checker] with Frontend headless runs
// through upstream's headless front end ([oracle.Oracle.RecordHeadless]);
// [GenerateGoal] and [GenerateJSONRPC] those of the goal and jsonrpc
// profiles, run through the goal suite and the SDK's JSON-RPC path
// ([FrontendProfiles] names each profile's generator and front end).
//
// # What it avoids
//
// Orderings that race in upstream's own runs are not generated: two
// background jobs ending while the model works, a job that settles unseen
// until the turn has ended (its notice opens a turn of its own), a nested
// call a program does not await, concurrent nested reads, parallel calls
// under hooks (their hook events interleave), a timeout of a few
// milliseconds on a command that prints at once, output naming a pid, a time
// or the machine, a background subagent (it settles while the model works),
// concurrent children with different scripts (upstream binds a script to
// whichever child calls the model first), a workflow failure whose text is
// upstream's stack, a grep matching in several files (rg searches them in
// parallel). The turns profile counts the model calls upstream makes
// (llm-replay hands the steps out in order across turns), so its hooks
// block prompts by their text and steer once, and no turn fails before the
// steering. What slips through is caught: [Checker.Check] has upstream
// replay its own recording first, and a recording upstream does not
// reproduce is counted as unstable and dropped.
//
// # Shrinking and keeping
//
// A case whose recording our stack does not match is recorded again (the
// difference must reproduce) and shrunk by delta debugging ([Shrink]) over
// its calls, their argument keys, its workspace files and its permission
// answers, keeping the same [Signature] (the kind and field paths of the
// first difference). [KeepIn] writes the minimal case into the tree: the
// recording under testdata/replay/oracle/<name> with a NOTES.md naming it
// as constructed, its script as harness/oracle/gen/specs/<name>.json and a
// row of gen/settings.tsv. A difference that is deliberate is a
// [NamedDeparture], documented in docs/.
//
// # Running
//
// [Campaign] runs a range of cases (dsh-oracle diff, make oracle-diff);
// TestDifferentialBudget runs a fixed small budget in CI when DSHSIM_ORACLE
// is set. docs/oracle.md says how to run a long campaign.
//
// # Imports
//
// Test tooling: no product package imports it.
package diff
