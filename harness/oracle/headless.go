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

// headlessScript is the agent's driver of the headless front end.
const headlessScript = "headless.mjs"

// headlessFiles are the files a headless refresh writes: the suite's
// compared log and the run's stderr (the headless-profile layout).
var headlessFiles = []string{recording.SessionExpectedFile, recording.StderrExpectedFile}

// HeadlessScriptError says why a script cannot run through the headless
// front end: it is one task, submitted once, with nobody to answer.
func HeadlessScriptError(s *Script) error {
	var why []string
	if len(s.Prompts) != 1 || len(s.Steps) > 0 || len(s.AllSteps) > 0 {
		why = append(why, "it has one task (one prompt, no other input steps)")
	}
	if len(s.Prompts) == 1 && (s.Prompts[0] == "" || strings.HasPrefix(s.Prompts[0], "-")) {
		why = append(why, `its task is neither empty nor starts with "-" (the CLI would read it as a flag)`)
	}
	if len(s.PermissionAnswers) > 0 {
		why = append(why, "it has no approval channel (no permission answers)")
	}
	if len(s.Children) > 0 {
		why = append(why, "its scripts here are the session's alone (no child scripts)")
	}
	if s.Override != nil {
		why = append(why, "its script is the log's (no replay.override.json)")
	}
	if len(why) == 0 {
		return nil
	}
	return errors.New("a headless run takes a script that fits the unattended path: " + strings.Join(why, "; "))
}

// RecordHeadless makes a recording named name from script s through
// upstream's published unattended front end: the product CLI's headless
// profile (@deepseek-ai/dsh over dsh-base and dsh-headless, agent/headless.mjs),
// upstream's llm-replay playing the script as the model, under
// DSH_PERMISSION_MODE opt.Settings.Mode (workspace-write, the profile's
// default, when empty), with no ACP client and so no approval channel. The
// recording is laid out as upstream's headless-profile scenario is:
// session.expected.jsonl (the persisted log, normalised and header-scrubbed
// as the suite does), stderr.expected.txt (the run's), dshsim.replay.json
// (the task, as upstream's test file gives it, and the mode) and workspace/.
// Upstream then replays the recording once more as a check (the log as its
// own script). Only the mode of the settings applies (the profile composes
// the rest), so a script needing another switch is refused, as is one that
// does not fit the unattended path ([HeadlessScriptError]).
func (o *Oracle) RecordHeadless(ctx context.Context, name string, s *Script, opt Options) (*Recorded, error) {
	if err := HeadlessScriptError(s); err != nil {
		return nil, fmt.Errorf("script %s: %w", name, err)
	}
	rest := opt.Settings
	rest.Mode, rest.Reminder = "", false
	if rest != (Settings{}) {
		return nil, fmt.Errorf("script %s: a headless run composes upstream's headless profile, whose switches are its own: only the permission mode applies, not %s", name, rest)
	}
	files, err := s.Encode()
	if err != nil {
		return nil, fmt.Errorf("script %s: %w", name, err)
	}
	mode := opt.Settings.Mode
	if mode == "" {
		mode = WorkspaceWrite
	}
	opt.Frontend, opt.Settings = recording.Headless, Settings{Mode: mode}
	res, err := o.run(ctx, name, "", files, []bool{true, false}, opt)
	if err != nil {
		return nil, err
	}
	out := map[string][]byte{}
	for f, b := range files {
		if strings.HasPrefix(f, recording.WorkspaceDir+"/") {
			out[f] = b
		}
	}
	for _, f := range headlessFiles {
		out[f] = res.Files[f]
	}
	if out[recording.SettingsFile], err = headlessSettings(s.Prompts[0], mode); err != nil {
		return nil, err
	}
	return &Recorded{Name: name, Files: out, Refresh: res.Passes[0], Check: res.Passes[1]}, nil
}

// headlessSettings is a headless recording's dshsim.replay.json: the task
// upstream's test file would give it, and how the run was made.
func headlessSettings(prompt, mode string) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	err := enc.Encode(struct {
		Prompt string `json:"prompt"`
		Note   string `json:"note"`
	}{prompt, fmt.Sprintf("upstream oracle run: the product CLI's headless profile (dsh --profile headless, DSH_PERMISSION_MODE=%s) with this task, llm-replay as the model and no title model; no client, so no approval channel", mode)})
	return b.Bytes(), err
}
