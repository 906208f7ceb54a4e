// Package oracle runs upstream's own published code (the dsh 0.1.0-rc.8
// plugin stack under upstream's snapshot harness, installed by setup.sh in
// this directory) as the truth our stack is compared with.
//
// # Finding it
//
// [FromEnv] opens the oracle that DSHSIM_ORACLE names; its error says why
// there is none and names the variable, so a test skips with it:
//
//	o, err := oracle.FromEnv()
//	if err != nil {
//		t.Skip(err)
//	}
//
// # Running upstream's suite
//
// [Oracle.Replay] runs a recording through upstream's suite unchanged and
// reports MATCH or DIFF of stdout and of the normalised session.jsonl, with
// the files run.mjs wrote (the two normalised logs that were compared, the
// raw ones, upstream's stderr). [Oracle.Refresh] runs the suite's refresh
// path instead (the fixture rewritten from the run) and checks the result
// with a replay. [SettingsOf] derives the overlay switches a recording needs
// ([Settings]: permission mode, tools mode, spill, session query, pacing, a
// missing runner, the repeat reminder, the workspace instructions, a retry
// policy). A scenario whose input opens no session compares no log, as
// upstream's suite compares none without a model turn ([Outcome].NoLog).
//
// # Making recordings
//
// A [Script] is a constructed model script: prompts (or input steps, or
// every input step), the model's replies per turn (tool calls, a text, or
// raw chunks such as a max-tokens or error finish), a workspace, the user's
// permission answers and an override; its JSON form is a
// gen/specs/<name>.json file, listed with its switches in gen/settings.tsv
// ([LoadSpecs]).
// [Script.Encode] writes it as upstream's fixture wants it (the
// assistant/chunk events llm-replay plays), and [Oracle.Record] has
// upstream play it and rewrite the fixture, then replay its own recording:
// a recording upstream does not reproduce ([Recorded.Stable] false) depends
// on timing and is not kept. [Notes] writes the NOTES.md that names the
// script as constructed. [Oracle.RecordHeadless] does the same through
// upstream's unattended front end, the product CLI's headless profile
// (agent/headless.mjs), and lays the recording out as upstream's
// headless-profile scenario; [Oracle.RecordGoal] through the ACP goal suite
// (agent/goal.mjs: the published goal domain, round driver and tools,
// the script in replay.override.json, the goal-snapshots layout), and
// [Oracle.RecordJSONRPC] through the SDK's JSON-RPC path (agent/jsonrpc.mjs:
// the published SDK client and server, the jsonrpc-agent snapshots'
// layout). The web front end has no driver (docs/oracle.md says why).
//
// # Where runs happen
//
// Every run happens in a child process with a private /tmp (package
// replay/isolate). The scenario is copied there, run.mjs's PROBE_OUT lies
// there, and upstream's own /tmp/dsh-subprocess-* and
// /tmp/dsh-acp-snap-<hash> go with the child: a run writes nothing in the
// oracle's directory, in the recording it was given or in the host's /tmp,
// and two runs at once never meet. Results come back in memory; the caller
// writes what it keeps.
//
// # Imports
//
// Test tooling: no product package imports it.
package oracle
