// Package callbench measures whole tool calls as a user meets them, ours
// beside upstream's in the same run: one bash call of `true`, and run_code's
// first call (docs/benchmarks.md reads the numbers).
//
// # What is measured
//
// A call is measured where both stacks log it: from the tool/call event's
// append to the tool/result event's append in the session log, which spans
// the call's arguments, the tool pipeline, the sandbox's confinement, the
// spawn, the rendering and the session log's own writes. Both sides run the
// same constructed model script ([WriteScript]: each call its own step)
// under workspace-write, confined by Landlock as on a host without a usable
// bwrap:
//
//   - upstream: its own code in the installed oracle (harness/oracle), run
//     by the oracle's Replay (Options.Agent); the agent is the oracle's with its
//     sandbox provider's bwrap probe answered false through the provider's
//     own test hook ([LandlockAgent]), so its chain selects its Landlock
//     launcher (the C runner of @deepseek-ai/node-addon-landlock-run)
//     instead of the snapshot overlay's passthrough runner;
//   - ours: the stack through dsh-replay's driver (package replay), with
//     Landlock as its only backend: the default, in-process path.
//
// Upstream's session log has millisecond times, and so has ours: a call is
// a whole number of milliseconds on both sides, and a benchmark reports
// the medians of many calls. [CallTimes] reads them.
//
// # Imports
//
// Test tooling: the replay driver and the oracle runner.
package callbench
