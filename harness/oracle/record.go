package oracle

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/dshsim/dshsim/harness/replay/recording"
	"github.com/dshsim/dshsim/sandbox/outfile"
)

// NotesFile is the note beside every recording the oracle made.
const NotesFile = "NOTES.md"

// Recorded is a recording upstream made from a script.
type Recorded struct {
	// Name is the scenario's name (its spill root derives from it).
	Name string
	// Files is the recording, keyed by relative path: input.json,
	// session.jsonl and stdout.expected.jsonl as upstream's refresh wrote
	// them, workspace/..., and dshsim.replay.json when the run needs
	// settings a recording cannot state. NOTES.md is the caller's (see [Notes]).
	Files map[string][]byte
	// Refresh is the pass that made it, Check upstream's own replay of it.
	Refresh, Check *Outcome
}

// Stable reports whether upstream reproduced its own recording, modulo
// what no re-run reproduces and our replay compares modulo: the event times
// session-query texts print (dshsim.replay.json's eventTimes) and the path
// of a bash stream's full-output file (random per run): a recording
// upstream does not reproduce otherwise depends on timing, not on code.
// Every log counts, each child's as the session's: a child log the check
// does not reproduce is stable only when, masked so, it is the one the
// refresh harvested (run.mjs writes no normalised child fixture; the
// refresh's own harvest is that fixture when the refresh matched it).
func (r *Recorded) Stable() bool {
	if r.Check.Match() {
		return true
	}
	if !r.Check.StdoutMatch || !bytes.Equal(masked(r.Check.Files["harvest.norm.jsonl"]), masked(r.Check.Files["fixture.norm.jsonl"])) {
		return false
	}
	for f, ok := range r.Check.ChildMatch {
		if ok {
			continue
		}
		n, found := childIndex(f)
		if !found || r.Refresh == nil || !r.Refresh.ChildMatch[f] {
			return false
		}
		harvest := "harvest." + strconv.Itoa(n) + ".norm.jsonl"
		got, ok := r.Check.Files[harvest]
		want, wok := r.Refresh.Files[harvest]
		if !ok || !wok || !bytes.Equal(masked(got), masked(want)) {
			return false
		}
	}
	return true
}

// masked is a normalised log with what no re-run reproduces masked (see
// [Recorded.Stable]).
func masked(b []byte) []byte {
	b = eventTimes.ReplaceAll(b, []byte("{{eventTime}}"))
	return outfile.Pattern.ReplaceAll(b, []byte("{{subprocessOutput:$1}}"))
}

// childIndex reads n of a child log's name, session.<n>.jsonl.
func childIndex(f string) (int, bool) {
	s := strings.TrimSuffix(strings.TrimPrefix(f, "session."), ".jsonl")
	n, err := strconv.Atoi(s)
	return n, err == nil && n > 0 && f == recording.ChildFile(n)
}

// Write writes the recording into dir (made if missing; files of the same
// names replaced, others left).
func (r *Recorded) Write(dir string) error { return writeTree(dir, r.Files) }

// Record makes a recording named name from script s, as upstream's suite
// refreshes a fixture: upstream's llm-replay plays the script as the model
// through upstream's tools, approval, hooks and jobs, the fixture is
// rewritten from that run, and upstream replays the result once as a check.
// Everything happens in the run's private /tmp.
func (o *Oracle) Record(ctx context.Context, name string, s *Script, opt Options) (*Recorded, error) {
	files, err := s.Encode()
	if err != nil {
		return nil, fmt.Errorf("script %s: %w", name, err)
	}
	res, err := o.run(ctx, name, "", files, []bool{true, false}, opt)
	if err != nil {
		return nil, err
	}
	for f, b := range res.Files {
		files[f] = b
	}
	if set := ReplaySettings(opt.Settings, eventTimes.Match(files[recording.SessionFile])); set != nil {
		files[recording.SettingsFile] = set
	}
	return &Recorded{Name: name, Files: files, Refresh: res.Passes[0], Check: res.Passes[1]}, nil
}

// eventTimes matches an event time as upstream prints it in session-query
// texts (JavaScript's toISOString).
var eventTimes = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z`)

// ReplaySettings is the dshsim.replay.json a recording made with s needs
// (nil when none): spill's bound, session query, a paced model, a missing
// runner, the retry policy, the instructions' markers; eventTimes when its
// session-query texts print event times, which no re-run reproduces. The
// repeat reminder and the workspace instructions need no setting: the
// replay composes both, and their messages are in the log.
func ReplaySettings(s Settings, eventTimes bool) []byte {
	type workspaceContext struct {
		Markers json.RawMessage `json:"projectRootMarkers"`
	}
	type file struct {
		Spill      int               `json:"spillMaxInlineBytes,omitempty"`
		SQ         bool              `json:"sessionQuery,omitempty"`
		EventTimes bool              `json:"eventTimes,omitempty"`
		Paced      bool              `json:"pacedModel,omitempty"`
		Backend    string            `json:"sandboxBackend,omitempty"`
		Runner     string            `json:"landlockRunner,omitempty"`
		Retry      json.RawMessage   `json:"retryPolicy,omitempty"`
		Workspace  *workspaceContext `json:"workspaceContext,omitempty"`
		Todo       *bool             `json:"todoAllowParallelInProgress,omitempty"`
		Subagent   map[string]any    `json:"subagentTools,omitempty"`
		MaxDepth   int               `json:"subagentMaxDepth,omitempty"`
		Workflow   int               `json:"workflowMaxConcurrentAgents,omitempty"`
		Profile    string            `json:"profile,omitempty"`
		Prompts    *bool             `json:"imagePrompts,omitempty"`
		Note       string            `json:"note"`
	}
	var f file
	var why []string
	if s.SessionQuery {
		f.SQ = true
		why = append(why, "mounted @deepseek-ai/dsh-tool-session-query (PROBE_SQ=1)")
	}
	if s.Spill {
		f.Spill = SpillMaxInlineBytes
		why = append(why, fmt.Sprintf("mounted dsh-spill-local + dsh-spill-policy with maxInlineBytes %d (PROBE_SPILL=1)", SpillMaxInlineBytes))
	}
	if s.PaceMs > 0 {
		f.Paced = true
		why = append(why, fmt.Sprintf("ran llm-replay with paceMs %d (PROBE_PACE_MS=%d): each model call lets upstream's host observe the jobs", s.PaceMs, s.PaceMs))
	}
	if s.MissingRunner {
		f.Backend, f.Runner = recording.BackendLandlock, MissingRunnerPath
		why = append(why, "confined bash with a runner that does not exist, <cwd>/.dsh-missing-sandbox-runner (PROBE_RUNNER=missing, as upstream's fixture DSH_SNAPSHOT_MISSING_SANDBOX_RUNNER=1)")
	}
	if s.Retry != "" {
		f.Retry = json.RawMessage(s.Retry)
		why = append(why, "mounted dsh-llm-retry and gave the replay provider this retryPolicy (PROBE_RETRY)")
	}
	if s.InstructionMarkers != "" {
		f.Workspace = &workspaceContext{Markers: json.RawMessage(s.InstructionMarkers)}
		why = append(why, "gave dsh-agent-instructions these projectRootMarkers (PROBE_INSTRUCTION_MARKERS)")
	}
	if s.TodoSequential {
		f.Todo = new(bool)
		why = append(why, "mounted dsh-tool-todo with allowParallelInProgress false (PROBE_TODO_PARALLEL=0)")
	}
	if s.SubagentOneShot || s.SubagentForeground {
		t := map[string]any{}
		if s.SubagentOneShot {
			t["backgroundMode"] = "one-shot"
			why = append(why, "composed subagent with backgroundMode one-shot (PROBE_SUBAGENT_BACKGROUND=one-shot)")
		}
		if s.SubagentForeground {
			t["enableRunInBackground"] = false
			why = append(why, "composed subagent with enableRunInBackground false (PROBE_SUBAGENT_RUN_IN_BACKGROUND=0)")
		}
		f.Subagent = map[string]any{"subagent": t}
	}
	if s.Subagents {
		f.MaxDepth, f.Workflow = s.MaxDepth, WorkflowMaxConcurrentAgents
		if s.MaxDepth != 0 {
			why = append(why, fmt.Sprintf("mounted the subagent tools at maxDepth %d (PROBE_MAX_DEPTH=%d)", s.MaxDepth, s.MaxDepth))
		}
		why = append(why, fmt.Sprintf("capped the workflow engine at maxConcurrentAgents %d (PROBE_SUBAGENTS=1 mounts it so)", WorkflowMaxConcurrentAgents))
	}
	if s.Image {
		f.Profile, f.Prompts = recording.ProfileImage, new(bool)
		why = append(why, "mounted dsh-attachment-local and so read_image, the session on deepseek-v4-flash-vision-exp, which the overlay's image-route shim declares image-capable (PROBE_IMAGE=1), under dsh-acp 0.0.1-rc.1, which advertises no image prompts")
	}
	if len(why) == 0 {
		return nil
	}
	f.Note = "upstream oracle run " + strings.Join(why, " and ") + "; the recording itself cannot say so"
	if s.SessionQuery && eventTimes {
		f.EventTimes = true
		f.Note += "; its session-query texts print event ISO times (upstream's), compared modulo time"
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(f); err != nil {
		panic("oracle: marshal replay settings: " + err.Error())
	}
	return b.Bytes()
}

// Notes says where a recording the oracle made comes from; Markdown renders
// its NOTES.md.
type Notes struct {
	// Name is the recording's name.
	Name string
	// Origin says how the model script was made, e.g. "written by hand as
	// `harness/oracle/gen/specs/<name>.json`".
	Origin string
	// Remark says what the recording exercises.
	Remark string
	// Settings are the run's switches.
	Settings Settings
}

// intro is a NOTES.md's title and its first lines, to "It was <how>".
func (n Notes) intro(how string) *strings.Builder {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n", n.Name)
	fmt.Fprintf(&b, "Produced by upstream's own code (oracle), not by dshsim. The model script is constructed: %s,\n", n.Origin)
	fmt.Fprintf(&b, "encoded as assistant/chunk events by package harness/oracle. It was %s\n", how)
	return &b
}

// HeadlessMarkdown is the NOTES.md of a recording upstream's headless
// front end made ([Oracle.RecordHeadless]).
func (n Notes) HeadlessMarkdown() []byte {
	mode := n.Settings.Mode
	if mode == "" {
		mode = WorkspaceWrite
	}
	b := n.intro("played by")
	b.WriteString("`@deepseek-ai/dsh-llm-replay` as the model of the product CLI's headless profile (`dsh --profile headless`,\n")
	b.WriteString("`@deepseek-ai/dsh` 0.1.0-rc.8 over dsh-base and dsh-headless, driven by `harness/oracle/agent/headless.mjs` as\n")
	b.WriteString("`headless.snapshot.ts` drives the product profile), with no title model and no client, so no approval channel.\n")
	b.WriteString("The log is the persisted session, normalised and header-scrubbed as the suite does; upstream replayed it once\n")
	b.WriteString("more (the log as its own script) and reproduced it.\n\n")
	fmt.Fprintf(b, "What it exercises: %s\n\n", n.Remark)
	fmt.Fprintf(b, "Settings of the run: `DSH_PERMISSION_MODE` = %s; the task is dshsim.replay.json's prompt.\n\n", mode)
	b.WriteString("Caveat: the header (system prompt / tool schemas) is scrubbed to {{system}}/{{tools}}; headers are not evidence.\n")
	return []byte(b.String())
}

// Markdown is the NOTES.md of a recording with the input in.
func (n Notes) Markdown(in recording.Input) []byte {
	mode := n.Settings.Mode
	if mode == "" {
		mode = DangerFullAccess + " (default)"
	}
	answers, _ := json.Marshal(in.PermissionAnswers)
	if in.PermissionAnswers == nil {
		answers = []byte("[]")
	}
	overlay := onTexts([]entry{
		{n.Settings.SessionQuery, "tool-session-query mounted (upstream session-query overlay; spill off)"},
		{n.Settings.Spill, fmt.Sprintf("dsh-spill-local + dsh-spill-policy mounted with maxInlineBytes %d (spill on, not off)", SpillMaxInlineBytes)},
		{n.Settings.ToolsMode != "", fmt.Sprintf("tools.mode %s + dsh-code-runtime-worker-thread (upstream %s-mode overlay)", n.Settings.ToolsMode, n.Settings.ToolsMode)},
		{n.Settings.Todo && !n.Settings.TodoSequential, "dsh-tool-todo mounted (allowParallelInProgress true, as the acp-agent sets it)"},
		{n.Settings.TodoSequential, "dsh-tool-todo mounted with allowParallelInProgress false (PROBE_TODO_PARALLEL=0)"},
		{n.Settings.FSSearch, "dsh-tool-fs-search mounted (sampleOverCapGlobResults true, globMaxResults 4, as the fs-search overlay; its packaged ripgrep 15)"},
		{n.Settings.Reminder, "dsh-repeat-tool-reminder mounted with its default thresholds (as dsh-base mounts it)"},
		{n.Settings.Instructions, `dsh-agent-instructions mounted (maxBytes 65536, dshHome $DSH_HOME = <cwd>/.dsh, projectRootMarkers PROBE_INSTRUCTION_MARKERS or [".git"]), the default profile's workspaceContext`},
		{n.Settings.Retry != "", "dsh-llm-retry mounted and the replay provider deepseek-official given the retryPolicy of PROBE_RETRY (as EX/retry.cordis*.yml does)"},
		{n.Settings.NoHooks, "no hook bridges mounted"},
		{n.Settings.MissingRunner, "sandbox runnerCommand <cwd>/.dsh-missing-sandbox-runner, a path that does not exist (not the passthrough runner)"},
		{n.Settings.Subagents, fmt.Sprintf("delegation mounted as the acp-agent composes it (subagent service, in-process spawn and fork, tool-subagent-control and list-agents, report, subagent continuable and subagent_fork waiting, maxDepth %d; workflow-worker-thread with maxConcurrentAgents %d, tool-workflow); child scripts session.<n>.jsonl, bound by llm-replay to the children in the order they first call the model", max(n.Settings.MaxDepth, 1), WorkflowMaxConcurrentAgents)},
		{n.Settings.Image, "dsh-attachment-local mounted (dshHome $DSH_HOME = <cwd>/.dsh), so tool-fs registers read_image; the session's model is deepseek-v4-flash-vision-exp, declared image-capable by the overlay's image-route shim (llm-replay's adapter declares no modality)"},
	})
	probe := n.Settings.String()
	if probe == "" {
		probe = "(none)"
	}
	b := n.intro("replayed by")
	b.WriteString("`@deepseek-ai/dsh-llm-replay` through the dsh 0.1.0-rc.8 plugin stack over `@deepseek-ai/dsh-acp`,\n")
	b.WriteString("driven by `runScenario` of `@deepseek-ai/dsh-acp-snapshot`, and the fixture was rewritten with the\n")
	b.WriteString("suite's refresh path (tokenizeSessionFixtureCwd + stabilizeRefreshLog + scrubRequestHeaders).\n")
	b.WriteString("The tool results, approvals, hook events and runtime context are upstream's real output.\n\n")
	fmt.Fprintf(b, "What it exercises: %s\n\n", n.Remark)
	b.WriteString("Settings of the run:\n")
	fmt.Fprintf(b, "- permission mode: `DSH_PERMISSION_MODE` = %s; approval policy = never if danger-full-access, else ask\n", mode)
	fmt.Fprintf(b, "- permissionAnswers: %s\n", answers)
	b.WriteString("- overlay: the default snapshot profile (passthrough sandbox runner, bash timeoutMs 60000,\n")
	b.WriteString("  no spill, diffBasisMaxBytes 10 MiB, hooks from ./hooks.json and ./codex-hooks.json of the workspace)")
	if len(overlay) > 0 {
		b.WriteString("; " + strings.Join(overlay, "; "))
	}
	fmt.Fprintf(b, "\n- probe env: `%s`\n", probe)
	if !slices.ContainsFunc(in.Steps, func(st recording.Step) bool { return st.Op == "newSession" }) {
		b.WriteString("- the input has no newSession: no session, so no log (session.jsonl is the header the script's encoding wrote; upstream compares no log for such a scenario)\n")
	}
	for _, st := range in.Steps {
		if st.Op == "promptAndCancel" {
			b.WriteString("- cancellation: the promptAndCancel steps ran under vitest (agent/probe.test.mjs), as upstream suite.ts runs them\n")
			break
		}
	}
	b.WriteString("\nCaveat: the header (system prompt / tool schemas) is scrubbed to {{system}}/{{tools}}: the probe's\n")
	b.WriteString("cordis config is a reconstruction (examples/acp-agent is not published), so headers are not evidence.\n")
	b.WriteString("The passthrough runner means bash is never OS-sandboxed upstream (same as the real suite).\n")
	return []byte(b.String())
}

// ReadInput reads a recording's input.json.
func ReadInput(dir string) (recording.Input, error) {
	var in recording.Input
	data, err := os.ReadFile(filepath.Join(dir, recording.InputFile))
	if err != nil {
		return in, err
	}
	if err := json.Unmarshal(data, &in); err != nil {
		return in, fmt.Errorf("%s: %w", filepath.Join(dir, recording.InputFile), err)
	}
	return in, nil
}
