package oracle

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/dshsim/dshsim/harness/replay/recording"
	"github.com/dshsim/dshsim/pipeline/session"
)

// Permission modes an upstream run can be given (DSH_PERMISSION_MODE).
const (
	DangerFullAccess = "danger-full-access"
	WorkspaceWrite   = "workspace-write"
	ReadOnly         = "read-only"
)

// Tools modes of the overlay (PROBE_TOOLS_MODE; "" is native).
const (
	ToolsCode = "code"
	ToolsBoth = "both"
)

// defaultMaxJobs is upstream's admission bound of background jobs per owner.
const defaultMaxJobs = 10

// SpillMaxInlineBytes is the spill bound the overlay mounts with PROBE_SPILL=1.
const SpillMaxInlineBytes = 800

// Settings are the switches of one upstream run: the scenario's permission
// mode and the overlay's parts (agent/cordis.snapshot.yml reads them from the
// environment). Their text form is gen/settings.tsv's env column.
type Settings struct {
	// Mode is DSH_PERMISSION_MODE ("" = danger-full-access, approval never;
	// any other mode asks).
	Mode string
	// ToolsMode is PROBE_TOOLS_MODE: "" (native), "code" or "both".
	ToolsMode string
	MountSettings
	// PaceMs paces llm-replay's chunks (PROBE_PACE_MS).
	PaceMs int
	// MissingRunner confines bash with a sandbox runner that does not
	// exist, <cwd>/.dsh-missing-sandbox-runner (PROBE_RUNNER=missing: upstream's
	// fixture DSH_SNAPSHOT_MISSING_SANDBOX_RUNNER=1); otherwise the
	// passthrough runner of upstream's snapshot runs.
	MissingRunner bool
	InstructionSettings
	// Retry mounts dsh-llm-retry and gives the replay provider this retry
	// policy, a [recording.RetryPolicy] in compact JSON (PROBE_RETRY; "" mounts
	// no retry).
	Retry string
	SubagentSettings
}

// MountSettings are the plugins and tools a probe mounts beyond the base.
type MountSettings struct {
	// Spill mounts spill with maxInlineBytes 800 (PROBE_SPILL=1).
	Spill bool
	// SessionQuery mounts tool-session-query (PROBE_SQ=1).
	SessionQuery bool
	// NoHooks unmounts both hook bridges (PROBE_HOOKS=0).
	NoHooks bool
	// Todo mounts tool-todo (PROBE_TODO=1); FSSearch mounts tool-fs-search
	// with the fs-search overlay's settings (PROBE_FS_SEARCH=1).
	Todo, FSSearch bool
	// TodoSequential mounts tool-todo with allowParallelInProgress false
	// (PROBE_TODO_PARALLEL=0, with PROBE_TODO=1).
	TodoSequential bool
	// Reminder mounts dsh-repeat-tool-reminder with its default thresholds,
	// as upstream's dsh-base mounts it (PROBE_REMINDER=1).
	Reminder bool
	// Image mounts the local attachment store and so read_image, on the
	// image route of upstream's image overlay (PROBE_IMAGE=1: the session's
	// model is deepseek-v4-flash-vision-exp, declared image-capable by the
	// overlay's image-route shim, since llm-replay's adapter declares no
	// modality).
	Image bool
}

// InstructionSettings are the workspace instructions' settings.
type InstructionSettings struct {
	// Instructions mounts dsh-agent-instructions with the default profile's
	// workspaceContext (PROBE_INSTRUCTIONS=1); InstructionMarkers are its
	// projectRootMarkers, a JSON list of names in compact form
	// (PROBE_INSTRUCTION_MARKERS; "" keeps [".git"]).
	Instructions       bool
	InstructionMarkers string
}

// SubagentSettings are delegation's settings.
type SubagentSettings struct {
	// Subagents mounts delegation as upstream's acp-agent composes it
	// (PROBE_SUBAGENTS=1): the subagent service, the in-process spawn and
	// fork providers, send_message, interrupt_agent, list_agents, report in
	// continuable children, subagent (continuable) and subagent_fork
	// (waits), the workflow engine (maxConcurrentAgents 1) and tool.
	// MaxDepth is the two tools' maxDepth (PROBE_MAX_DEPTH; 0 keeps 1,
	// upstream's default).
	Subagents bool
	MaxDepth  int
	// SubagentOneShot makes subagent's run_in_background start a one-shot
	// child as a job (PROBE_SUBAGENT_BACKGROUND=one-shot); SubagentForeground
	// removes its run_in_background (PROBE_SUBAGENT_RUN_IN_BACKGROUND=0).
	// Both need PROBE_SUBAGENTS=1.
	SubagentOneShot, SubagentForeground bool
}

// WorkflowMaxConcurrentAgents is the workflow engine's cap the overlay
// mounts with PROBE_SUBAGENTS=1 (so a run's agent events come in one order).
const WorkflowMaxConcurrentAgents = 1

// delegationTools are the tools only a composition with delegation offers.
var delegationTools = []string{"subagent", "subagent_fork", "send_message", "interrupt_agent", "list_agents", "workflow"}

// MissingRunnerPath is the runner MissingRunner names, in the replay
// settings' spelling.
const MissingRunnerPath = "{{cwd}}/.dsh-missing-sandbox-runner"

// ParseSettings reads the env form: space-separated K=V of
// DSH_PERMISSION_MODE, PROBE_TOOLS_MODE, PROBE_SPILL=1, PROBE_SQ=1,
// PROBE_HOOKS=0, PROBE_TODO=1, PROBE_FS_SEARCH=1, PROBE_PACE_MS,
// PROBE_RUNNER=missing, PROBE_REMINDER=1, PROBE_INSTRUCTIONS=1,
// PROBE_INSTRUCTION_MARKERS=<JSON list> (with PROBE_INSTRUCTIONS=1),
// PROBE_RETRY=<retry policy JSON>, PROBE_SUBAGENTS=1 and PROBE_MAX_DEPTH=<n>
// (with PROBE_SUBAGENTS=1), PROBE_IMAGE=1; a JSON value is written as [Settings.String]
// prints it (compact, keys in order). Anything else is an error naming it.
func ParseSettings(env string) (Settings, error) {
	var s Settings
	for _, kv := range strings.Fields(env) {
		if err := s.set(kv); err != nil {
			return Settings{}, err
		}
	}
	if s.InstructionMarkers != "" && !s.Instructions {
		return Settings{}, fmt.Errorf("setting %q: the markers are agent-instructions', which only PROBE_INSTRUCTIONS=1 mounts", "PROBE_INSTRUCTION_MARKERS="+s.InstructionMarkers)
	}
	if s.TodoSequential && !s.Todo {
		return Settings{}, fmt.Errorf("setting %q: the policy is tool-todo's, which only PROBE_TODO=1 mounts", "PROBE_TODO_PARALLEL=0")
	}
	if (s.SubagentOneShot || s.SubagentForeground) && !s.Subagents {
		return Settings{}, fmt.Errorf("setting %q: subagent's knobs are the delegation tools', which only PROBE_SUBAGENTS=1 mounts", env)
	}
	if s.MaxDepth != 0 && !s.Subagents {
		return Settings{}, fmt.Errorf("setting %q: the depth cap is the subagent tools', which only PROBE_SUBAGENTS=1 mounts", "PROBE_MAX_DEPTH="+strconv.Itoa(s.MaxDepth))
	}
	return s, nil
}

// switches names every switch ParseSettings knows, for its errors.
const switches = "DSH_PERMISSION_MODE=<mode>, PROBE_TOOLS_MODE=code|both, PROBE_SPILL=1, PROBE_SQ=1, PROBE_HOOKS=0, PROBE_TODO=1, PROBE_TODO_PARALLEL=0, PROBE_FS_SEARCH=1, PROBE_PACE_MS=<n>, PROBE_RUNNER=missing, PROBE_REMINDER=1, PROBE_INSTRUCTIONS=1, PROBE_INSTRUCTION_MARKERS=<JSON list>, PROBE_RETRY=<retry policy JSON>, PROBE_SUBAGENTS=1, PROBE_MAX_DEPTH=<n>, PROBE_SUBAGENT_BACKGROUND=one-shot, PROBE_SUBAGENT_RUN_IN_BACKGROUND=0, PROBE_IMAGE=1"

// set applies one K=V switch.
func (s *Settings) set(kv string) error {
	k, v, _ := strings.Cut(kv, "=")
	flags := map[string]*bool{"PROBE_SPILL=1": &s.Spill, "PROBE_SQ=1": &s.SessionQuery, "PROBE_HOOKS=0": &s.NoHooks,
		"PROBE_TODO=1": &s.Todo, "PROBE_TODO_PARALLEL=0": &s.TodoSequential, "PROBE_FS_SEARCH=1": &s.FSSearch, "PROBE_RUNNER=missing": &s.MissingRunner,
		"PROBE_REMINDER=1": &s.Reminder, "PROBE_INSTRUCTIONS=1": &s.Instructions, "PROBE_SUBAGENTS=1": &s.Subagents,
		"PROBE_SUBAGENT_BACKGROUND=one-shot": &s.SubagentOneShot, "PROBE_SUBAGENT_RUN_IN_BACKGROUND=0": &s.SubagentForeground,
		"PROBE_IMAGE=1": &s.Image}
	switch {
	case k == "DSH_PERMISSION_MODE" && (v == DangerFullAccess || v == WorkspaceWrite || v == ReadOnly):
		s.Mode = v
	case k == "PROBE_TOOLS_MODE" && (v == ToolsCode || v == ToolsBoth):
		s.ToolsMode = v
	case flags[kv] != nil:
		*flags[kv] = true
	case k == "PROBE_INSTRUCTION_MARKERS":
		m, err := markersJSON(v)
		if err != nil {
			return fmt.Errorf("setting %q: %w", kv, err)
		}
		s.InstructionMarkers = m
	case k == "PROBE_RETRY":
		r, err := retryJSON(v)
		if err != nil {
			return fmt.Errorf("setting %q: %w", kv, err)
		}
		s.Retry = r
	case k == "PROBE_MAX_DEPTH":
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || strconv.Itoa(n) != v {
			return fmt.Errorf("setting %q: want a depth cap >= 1", kv)
		}
		s.MaxDepth = n
	case k == "PROBE_PACE_MS":
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return fmt.Errorf("setting %q: want a number of milliseconds >= 0", kv)
		}
		s.PaceMs = n
	default:
		return fmt.Errorf("setting %q: not one of %s", kv, switches)
	}
	return nil
}

// markersJSON checks a PROBE_INSTRUCTION_MARKERS value: a non-empty JSON
// list of file names, spelled compactly (so it prints back as written).
func markersJSON(v string) (string, error) {
	var m []string
	if err := strictJSON(v, &m); err != nil {
		return "", fmt.Errorf("want a JSON list of file names: %w", err)
	}
	if len(m) == 0 || slices.Contains(m, "") {
		return "", errors.New("want at least one marker, none empty")
	}
	return canonical(v, m)
}

// retryJSON checks a PROBE_RETRY value: a retry policy as dshsim.replay.json's
// retryPolicy holds one, spelled compactly with its keys in order.
func retryJSON(v string) (string, error) {
	var p recording.RetryPolicy
	if err := strictJSON(v, &p); err != nil {
		return "", fmt.Errorf("want a retry policy (mode, maxRetries, retryableCodes, backoff): %w", err)
	}
	if p.Mode != recording.RetryNormal && p.Mode != recording.RetryAlways {
		return "", fmt.Errorf("mode: want %q or %q, got %q", recording.RetryNormal, recording.RetryAlways, p.Mode)
	}
	return canonical(v, p)
}

// strictJSON decodes v into x: one JSON value, no unknown keys.
func strictJSON(v string, x any) error {
	dec := json.NewDecoder(strings.NewReader(v))
	dec.DisallowUnknownFields()
	if err := dec.Decode(x); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("more than one JSON value")
	}
	return nil
}

// canonical is x's compact JSON, which v must be: the env form is split at
// spaces and printed back as parsed, so a value has one spelling.
func canonical(v string, x any) (string, error) {
	b, err := json.Marshal(x)
	if err != nil {
		return "", err
	}
	if string(b) != v {
		return "", fmt.Errorf("write it as %s", b)
	}
	return v, nil
}

// String is the env form ParseSettings reads ("" for the default profile).
func (s Settings) String() string {
	kv := onTexts([]entry{
		{s.Mode != "", "DSH_PERMISSION_MODE=" + s.Mode},
		{s.ToolsMode != "", "PROBE_TOOLS_MODE=" + s.ToolsMode},
		{s.Spill, "PROBE_SPILL=1"},
		{s.SessionQuery, "PROBE_SQ=1"},
		{s.NoHooks, "PROBE_HOOKS=0"},
		{s.Todo, "PROBE_TODO=1"},
		{s.TodoSequential, "PROBE_TODO_PARALLEL=0"},
		{s.FSSearch, "PROBE_FS_SEARCH=1"},
		{s.PaceMs > 0, "PROBE_PACE_MS=" + strconv.Itoa(s.PaceMs)},
		{s.MissingRunner, "PROBE_RUNNER=missing"},
		{s.Reminder, "PROBE_REMINDER=1"},
		{s.Instructions, "PROBE_INSTRUCTIONS=1"},
		{s.InstructionMarkers != "", "PROBE_INSTRUCTION_MARKERS=" + s.InstructionMarkers},
		{s.Retry != "", "PROBE_RETRY=" + s.Retry},
		{s.Subagents, "PROBE_SUBAGENTS=1"},
		{s.MaxDepth != 0, "PROBE_MAX_DEPTH=" + strconv.Itoa(s.MaxDepth)},
		{s.SubagentOneShot, "PROBE_SUBAGENT_BACKGROUND=one-shot"},
		{s.SubagentForeground, "PROBE_SUBAGENT_RUN_IN_BACKGROUND=0"},
		{s.Image, "PROBE_IMAGE=1"},
	})
	return strings.Join(kv, " ")
}

// entry is a text that is on or off.
type entry struct {
	on   bool
	text string
}

// onTexts are the texts of the entries that are on, in order.
func onTexts(entries []entry) []string {
	var out []string
	for _, e := range entries {
		if e.on {
			out = append(out, e.text)
		}
	}
	return out
}

// scenarioEnv is what run.mjs passes to the agent as the scenario's env
// (--env), probeEnv what the agent process reads from its own environment.
func (s Settings) scenarioEnv() []string {
	if s.Mode == "" {
		return nil
	}
	return []string{"DSH_PERMISSION_MODE=" + s.Mode}
}

func (s Settings) probeEnv() []string {
	var env []string
	for _, kv := range strings.Fields(s.String()) {
		if strings.HasPrefix(kv, "PROBE_") {
			env = append(env, kv)
		}
	}
	return env
}

// SettingsOf derives the settings upstream's run needs to reproduce rec:
// the permission mode from its first runtime-context message, the tools
// mode as the replay derives it, spill and session query from its
// dshsim.replay.json (or upstream's suite settings), pacing from pacedModel,
// the retry policy and the instructions' markers from there too, the repeat
// reminder and the workspace instructions from their messages in the log.
// A setting the overlay cannot give (a spill bound other than 800, a
// sandbox backend) is an error naming it.
func SettingsOf(rec *recording.Recording) (Settings, error) {
	var s Settings
	if pol, err := rec.Policy(); err == nil && pol.Mode != DangerFullAccess {
		s.Mode = pol.Mode
	}
	if mode, _ := rec.ToolsMode(); mode != "native" && mode != "" {
		s.ToolsMode = mode
	}
	set := rec.Settings
	switch set.SpillMaxInlineBytes {
	case 0:
	case SpillMaxInlineBytes:
		s.Spill = true
	default:
		return Settings{}, fmt.Errorf("%s: spillMaxInlineBytes %d: the oracle's overlay spills at %d only", rec.Name, set.SpillMaxInlineBytes, SpillMaxInlineBytes)
	}
	s.SessionQuery = set.SessionQuery
	s.Todo, s.FSSearch = calls(rec, "todo_write"), set.Profile == recording.ProfileFSSearch || calls(rec, "glob", "grep")
	s.TodoSequential = s.Todo && set.TodoAllowParallelInProgress != nil && !*set.TodoAllowParallelInProgress
	if set.PacedModel {
		s.PaceMs = 100
	}
	if err := s.turnSettingsOf(rec); err != nil {
		return Settings{}, err
	}
	if err := s.delegationOf(rec); err != nil {
		return Settings{}, err
	}
	switch {
	case set.DiffBasisMaxBytes != 0:
		return Settings{}, fmt.Errorf("%s: diffBasisMaxBytes: the oracle's overlay has no switch for it", rec.Name)
	case set.BashTimeoutMs != 0:
		return Settings{}, fmt.Errorf("%s: bashTimeoutMs: the oracle's overlay has no switch for it", rec.Name)
	case set.MaxConcurrentJobsPerOwner != nil && *set.MaxConcurrentJobsPerOwner != defaultMaxJobs:
		return Settings{}, fmt.Errorf("%s: maxConcurrentJobsPerOwner %d: the oracle's overlay runs with upstream's default %d only", rec.Name, *set.MaxConcurrentJobsPerOwner, defaultMaxJobs)
	case set.Profile == recording.ProfileImage:
		s.Image = true
	case set.Profile == recording.ProfileGoal && rec.Frontend == recording.Goal:
		// the goal front end mounts the goal plugins (goal.mjs)
	case set.Profile != "" && set.Profile != recording.ProfileDefault && set.Profile != recording.ProfileFSSearch:
		return Settings{}, fmt.Errorf("%s: profile %q: the oracle's overlay has the default, fs-search and image profiles only (and goal, for a recording of the goal front end)", rec.Name, set.Profile)
	case set.Prepare != "" || len(set.ServedTools) > 0:
		return Settings{}, fmt.Errorf("%s: a workspace preparation or served tools: the oracle's overlay has neither", rec.Name)
	case set.SandboxBackend == recording.BackendLandlock && set.LandlockRunner == MissingRunnerPath && set.LandlockABI == nil:
		s.MissingRunner = true
	case set.SandboxBackend != "" || set.LandlockRunner != "" || set.LandlockABI != nil:
		return Settings{}, fmt.Errorf("%s: a sandbox backend setting: the oracle's overlay runs bash through the passthrough runner, or a missing one", rec.Name)
	}
	return s, nil
}

// turnSettingsOf derives the plugins around the turn: the repeat reminder
// and the workspace instructions when the log shows their messages (the
// overlay mounts neither by default; without a message of theirs, mounting
// them changes nothing), the instructions' markers from workspaceContext,
// and the retry policy of dshsim.replay.json (or upstream's suite settings).
func (s *Settings) turnSettingsOf(rec *recording.Recording) error {
	set := rec.Settings
	s.Reminder = messageFrom(rec, func(src messageSource) bool { return src.Kind == "plugin" && src.Plugin == reminderPlugin })
	s.Instructions = messageFrom(rec, func(src messageSource) bool { return src.Kind == instructionsKind })
	if w := set.WorkspaceContext; w != nil {
		switch {
		case w.MaxBytes != nil && *w.MaxBytes == 0:
			if s.Instructions {
				return fmt.Errorf("%s: workspaceContext maxBytes 0 turns the instructions off, but the log shows their messages", rec.Name)
			}
		case w.MaxBytes != nil && *w.MaxBytes != instructionsMaxBytes:
			return fmt.Errorf("%s: workspaceContext maxBytes %d: the oracle's overlay mounts agent-instructions with maxBytes %d only", rec.Name, *w.MaxBytes, instructionsMaxBytes)
		case w.CompactBaselineAtRead != "":
			return fmt.Errorf("%s: workspaceContext compactBaselineAtRead: the oracle's overlay has no compaction fixture", rec.Name)
		default:
			s.Instructions = true
		}
		if len(w.ProjectRootMarkers) > 0 && !slices.Equal(w.ProjectRootMarkers, []string{".git"}) {
			b, err := json.Marshal(w.ProjectRootMarkers)
			if err != nil {
				return err
			}
			s.InstructionMarkers = string(b)
		}
	}
	if p := set.RetryPolicy; p != nil {
		b, err := json.Marshal(p)
		if err != nil {
			return err
		}
		s.Retry = string(b)
	}
	for _, v := range []string{s.InstructionMarkers, s.Retry} {
		if strings.ContainsFunc(v, unicode.IsSpace) {
			return fmt.Errorf("%s: %s holds white space, which the overlay's env form cannot say", rec.Name, v)
		}
	}
	return nil
}

// delegationOf mounts delegation when the recording has child sessions or
// its model calls a delegation tool, with the depth cap of its settings; a
// subagent fixture of upstream's suite, ask_user_question or a workflow cap
// other than the overlay's is refused by name.
func (s *Settings) delegationOf(rec *recording.Recording) error {
	set := rec.Settings
	s.Subagents = len(rec.Children) > 0 || calls(rec, delegationTools...)
	switch {
	case set.SubagentFixture != "":
		return fmt.Errorf("%s: subagentFixture %q: the oracle's overlay has none of upstream's subagent fixtures", rec.Name, set.SubagentFixture)
	case set.AskUser:
		return fmt.Errorf("%s: askUser: the oracle's overlay mounts no ask_user_question", rec.Name)
	case set.SettlementMarker:
		return fmt.Errorf("%s: settlementMarker: the oracle's overlay has no settlement marker fixture", rec.Name)
	case set.WorkflowMaxConcurrentAgents != 0 && set.WorkflowMaxConcurrentAgents != WorkflowMaxConcurrentAgents:
		return fmt.Errorf("%s: workflowMaxConcurrentAgents %d: the oracle's overlay caps the workflow at %d", rec.Name, set.WorkflowMaxConcurrentAgents, WorkflowMaxConcurrentAgents)
	case set.SubagentMaxDepth != nil && !s.Subagents:
		return fmt.Errorf("%s: subagentMaxDepth without a child session or a delegation call", rec.Name)
	case set.SubagentMaxDepth != nil && *set.SubagentMaxDepth < 1:
		return fmt.Errorf("%s: subagentMaxDepth %d: the overlay's cap is at least 1", rec.Name, *set.SubagentMaxDepth)
	case set.SubagentMaxDepth != nil && *set.SubagentMaxDepth != 1:
		s.MaxDepth = *set.SubagentMaxDepth
	}
	if err := subagentToolsOf(s, set.SubagentTools); err != nil {
		return fmt.Errorf("%s: subagentTools: %w", rec.Name, err)
	}
	return nil
}

// subagentToolsOf sets the overlay's subagent knobs from subagentTools; a
// knob the overlay has no switch for is the error.
func subagentToolsOf(s *Settings, tools map[string]recording.SubagentTool) error {
	for name, t := range tools {
		if name != "subagent" {
			return fmt.Errorf("the oracle's overlay has switches for subagent's knobs only, not %s's", name)
		}
		switch t.BackgroundMode {
		case "", recording.BackgroundContinuable:
		case recording.BackgroundOneShot:
			s.SubagentOneShot = true
		}
		if t.EnableRunInBackground != nil && !*t.EnableRunInBackground {
			s.SubagentForeground = true
		}
	}
	return nil
}

// The plugins around the turn as the log names them, and the instructions'
// default bound.
const (
	reminderPlugin       = "repeat-tool-reminder"
	instructionsKind     = "agent-instructions"
	instructionsMaxBytes = 65536
)

// messageSource is the source of a user/message event.
type messageSource struct {
	Kind   string `json:"kind"`
	Plugin string `json:"plugin"`
}

// messageFrom reports whether a user/message of the log has a source that
// match accepts.
func messageFrom(rec *recording.Recording, match func(messageSource) bool) bool {
	for _, e := range rec.Events {
		if e.Type != session.KindUserMessage {
			continue
		}
		var m struct {
			Source messageSource `json:"source"`
		}
		if json.Unmarshal(e.Data, &m) == nil && match(m.Source) {
			return true
		}
	}
	return false
}

// calls reports whether the recording calls one of the tools: a call of
// the model, or one nested in a run_code program (tool/code-dispatch-start).
func calls(rec *recording.Recording, names ...string) bool {
	for _, e := range rec.Events {
		if e.Type != session.KindToolCall && e.Type != session.KindCodeDispatchStart {
			continue
		}
		var c struct {
			Name string `json:"name"`
		}
		if json.Unmarshal(e.Data, &c) == nil && slices.Contains(names, c.Name) {
			return true
		}
	}
	return false
}
