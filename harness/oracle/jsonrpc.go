package oracle

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/dshsim/dshsim/harness/replay/recording"
)

// jsonrpcScript is the agent's driver of the JSON-RPC SDK front end.
const jsonrpcScript = "jsonrpc.mjs"

// jsonrpcFiles are the files a JSON-RPC refresh writes besides the logs:
// the SDK's notification stream and its run result.
var jsonrpcFiles = []string{recording.NotificationsFile, recording.ResultExpectedFile}

// EditorTool is the minimal composition's editor: a JSON-RPC script that
// calls it runs in that composition (the only one that has it).
const EditorTool = "str_replace_editor"

// JSONRPCScriptError says why a script cannot run through the JSON-RPC
// front end: one prompt over the SDK (no other input steps), nobody to
// answer an approval, the session's log as its script, no switch of the
// ACP overlay (the SDK's compositions are their own), children only in
// the default composition (the minimal one delegates nothing).
func JSONRPCScriptError(s *Script, set Settings) error {
	var why []string
	if len(s.Prompts) != 1 || len(s.Steps) > 0 || len(s.AllSteps) > 0 {
		why = append(why, "it has one prompt (no other input steps)")
	}
	if len(s.PermissionAnswers) > 0 {
		why = append(why, "it has no approval channel (no permission answers)")
	}
	if s.Override != nil {
		why = append(why, "its script is the log's (no replay.override.json)")
	}
	if set != (Settings{}) {
		why = append(why, "the SDK's compositions are their own (no overlay switch: "+set.String()+")")
	}
	if len(s.Children) > 0 && jsonrpcMinimal(s) {
		why = append(why, "the minimal composition (it calls "+EditorTool+") delegates nothing (no child scripts)")
	}
	if len(why) == 0 {
		return nil
	}
	return errors.New("a JSON-RPC run takes a script that fits the SDK's path: " + strings.Join(why, "; "))
}

// jsonrpcMinimal reports whether s runs in the minimal composition: it
// calls the editor.
func jsonrpcMinimal(s *Script) bool {
	return slices.ContainsFunc(s.Turns, func(t []Step) bool {
		return slices.ContainsFunc(t, func(st Step) bool {
			return slices.ContainsFunc(st.Calls, func(c Call) bool { return c.Name == EditorTool })
		})
	})
}

// RecordJSONRPC makes a recording named name from script s through
// upstream's JSON-RPC SDK front end (agent/jsonrpc.mjs): the published SDK
// client drives the published SDK server (over the rc.8 plugin set, as
// jsonrpc.cordis.yml reconstructs upstream's example: bash with no sandbox
// and no approval, one-shot delegation; or, for a script that calls
// str_replace_editor, jsonrpc-minimal.cordis.yml: persistent bash and the
// editor, danger-full-access, no runtime context) for one prompt, the SDK
// session id the script's header id, upstream's llm-replay playing the
// script. The recording is laid out as upstream's jsonrpc-agent snapshots:
// session.jsonl and session.<n>.jsonl (refreshed), notifications.expected.jsonl,
// result.expected.json, dshsim.replay.json (the prompt, as the test file
// gives it, and the composition) and workspace/. Upstream then replays the
// recording once more as a check.
func (o *Oracle) RecordJSONRPC(ctx context.Context, name string, s *Script, opt Options) (*Recorded, error) {
	if err := JSONRPCScriptError(s, opt.Settings); err != nil {
		return nil, fmt.Errorf("script %s: %w", name, err)
	}
	files, err := s.Encode()
	if err != nil {
		return nil, fmt.Errorf("script %s: %w", name, err)
	}
	if files[recording.SettingsFile], err = jsonrpcSettings(s.Prompts[0], jsonrpcMinimal(s)); err != nil {
		return nil, err
	}
	delete(files, recording.StdoutFile)
	opt.Frontend = recording.JSONRPC
	res, err := o.run(ctx, name, "", files, []bool{true, false}, opt)
	if err != nil {
		return nil, err
	}
	out := map[string][]byte{}
	for f, b := range files {
		if f != recording.InputFile {
			out[f] = b
		}
	}
	for f, b := range res.Files {
		out[f] = b
	}
	return &Recorded{Name: name, Files: out, Refresh: res.Passes[0], Check: res.Passes[1]}, nil
}

// jsonrpcSettings is a JSON-RPC recording's dshsim.replay.json: the prompt
// upstream's test file would give it, and the composition: the default's
// one-shot subagent tool, or profile minimal.
func jsonrpcSettings(prompt string, minimal bool) ([]byte, error) {
	type oneShot struct {
		RunInBackground bool `json:"runInBackground"`
		MaxDepth        int  `json:"maxDepth"`
	}
	v := struct {
		Profile         string   `json:"profile,omitempty"`
		OneShotSubagent *oneShot `json:"oneShotSubagent,omitempty"`
		Prompt          string   `json:"prompt"`
		Note            string   `json:"note"`
	}{Prompt: prompt, Note: "upstream oracle run: sdk.snapshot.ts's path, the published SDK client and server over the rc.8 plugin set (agent/jsonrpc.cordis.yml: bash with no sandbox and no approval), llm-replay as the model; the SDK session id is the log's"}
	if minimal {
		v.Profile = recording.ProfileMinimal
		v.Note = "upstream oracle run: sdk.snapshot.ts's path, the published SDK client and server in the minimal composition (agent/jsonrpc-minimal.cordis.yml: persistent bash and str_replace_editor, danger-full-access, no runtime context), llm-replay as the model; the SDK session id is the log's"
	} else {
		v.OneShotSubagent = &oneShot{MaxDepth: 3}
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	err := enc.Encode(v)
	return b.Bytes(), err
}
