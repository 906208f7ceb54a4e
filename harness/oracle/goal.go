package oracle

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/dshsim/dshsim/harness/replay/recording"
)

// goalScript is the agent's driver of the goal front end (run under
// vitest: the goal input steps wait with vi.waitFor).
const goalScript = "goal.mjs"

// goalFiles are the files a goal refresh writes: the suite's compared whole
// log and stdout (the goal-snapshots layout).
var goalFiles = []string{recording.SessionExpectedFile, recording.StdoutFile}

// goalHeader is a goal recording's session.jsonl: a header alone, as
// upstream's goal-snapshots hold it (the model script is the override).
const goalHeader = `{"type":"session","version":0,"id":"goal-oracle-placeholder","createdAt":0,"cwd":"{{cwd}}"}` + "\n"

// GoalScriptError says why a script cannot run through the goal front end:
// its model script is replay.override.json, which the goal recording holds,
// so it has no override of its own, and no child scripts.
func GoalScriptError(s *Script) error {
	var why []string
	if s.Override != nil {
		why = append(why, "its model script is the override it is encoded as (no replay.override.json of its own)")
	}
	if len(s.Children) > 0 {
		why = append(why, "it has no child scripts (the goal suite's agent delegates nothing)")
	}
	if len(s.AllSteps) > 0 {
		why = append(why, "it opens a session (steps after initialize and newSession)")
	}
	if len(why) == 0 {
		return nil
	}
	return errors.New("a goal run takes a script that fits the goal suite: " + strings.Join(why, "; "))
}

// GoalOverride is replay.override.json of a goal recording of s: its
// model steps in order as whole-script entries ({"kind": "chunks",
// "chunks": [...]}), the call ids numbered as [Script.Encode] numbers them.
// A call's arguments may hold upstream's {{fromRequest:<regexp>}}, which
// llm-replay resolves from the request (a goal id the run made).
func GoalOverride(s *Script) (json.RawMessage, error) {
	type entry struct {
		Kind   string `json:"kind"`
		Chunks []any  `json:"chunks"`
	}
	entries := []entry{}
	n := 0
	for _, t := range s.Turns {
		for _, st := range t {
			entries = append(entries, entry{Kind: "chunks", Chunks: stepChunks(st, &n)})
		}
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(entries); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// RecordGoal makes a recording named name from script s through upstream's
// goal suite (agent/goal.mjs): runScenario over the reconstructed ACP
// agent with the published goal domain, goal-round driver and goal tools
// mounted (PROBE_GOAL=1), upstream's llm-replay playing the script from
// replay.override.json, the input's goal steps (promptAndWaitForAgentMessage,
// waitForTurnStart, ...) run as goal.snapshot.ts runs them. The recording
// is laid out as upstream's goal-snapshots: session.jsonl a header alone,
// replay.override.json, input.json, session.expected.jsonl (the whole log,
// normalised as the goal test does) and stdout.expected.jsonl, with
// dshsim.replay.json naming profile goal and workspace/. Upstream then
// replays the recording once more as a check.
func (o *Oracle) RecordGoal(ctx context.Context, name string, s *Script, opt Options) (*Recorded, error) {
	if err := GoalScriptError(s); err != nil {
		return nil, fmt.Errorf("script %s: %w", name, err)
	}
	files, err := s.Encode()
	if err != nil {
		return nil, fmt.Errorf("script %s: %w", name, err)
	}
	over, err := GoalOverride(s)
	if err != nil {
		return nil, fmt.Errorf("script %s: %w", name, err)
	}
	files[recording.OverrideFile] = append(over, '\n')
	files[recording.SessionFile] = []byte(goalHeader)
	opt.Frontend = recording.Goal
	res, err := o.run(ctx, name, "", files, []bool{true, false}, opt)
	if err != nil {
		return nil, err
	}
	out := map[string][]byte{}
	for f, b := range files {
		if f != recording.StdoutFile {
			out[f] = b
		}
	}
	for _, f := range goalFiles {
		out[f] = res.Files[f]
	}
	if out[recording.SettingsFile], err = goalSettings(opt.Settings); err != nil {
		return nil, err
	}
	return &Recorded{Name: name, Files: out, Refresh: res.Passes[0], Check: res.Passes[1]}, nil
}

// goalSettings is a goal recording's dshsim.replay.json: profile goal, and
// how the run was made.
func goalSettings(set Settings) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	err := enc.Encode(struct {
		Profile string `json:"profile"`
		Note    string `json:"note"`
	}{recording.ProfileGoal, fmt.Sprintf("upstream oracle run: goal.snapshot.ts's runScenario over the reconstructed ACP agent with the goal domain, the goal-round driver and the goal tools (PROBE_GOAL=1; switches %s); the model script is replay.override.json", set)})
	return b.Bytes(), err
}
