package oracle

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/dshsim/dshsim/harness/replay/recording"
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
	// Spill mounts spill with maxInlineBytes 800 (PROBE_SPILL=1).
	Spill bool
	// SessionQuery mounts tool-session-query (PROBE_SQ=1).
	SessionQuery bool
	// NoHooks unmounts both hook bridges (PROBE_HOOKS=0).
	NoHooks bool
	// Todo mounts tool-todo (PROBE_TODO=1); FSSearch mounts tool-fs-search
	// with the fs-search overlay's settings (PROBE_FS_SEARCH=1).
	Todo, FSSearch bool
	// PaceMs paces llm-replay's chunks (PROBE_PACE_MS).
	PaceMs int
	// MissingRunner confines bash with a sandbox runner that does not
	// exist, <cwd>/.dsh-missing-sandbox-runner (PROBE_RUNNER=missing: upstream's
	// fixture DSH_SNAPSHOT_MISSING_SANDBOX_RUNNER=1); otherwise the
	// passthrough runner of upstream's snapshot runs.
	MissingRunner bool
}

// MissingRunnerPath is the runner MissingRunner names, in the replay
// settings' spelling.
const MissingRunnerPath = "{{cwd}}/.dsh-missing-sandbox-runner"

// ParseSettings reads the env form: space-separated K=V of
// DSH_PERMISSION_MODE, PROBE_TOOLS_MODE, PROBE_SPILL=1, PROBE_SQ=1,
// PROBE_HOOKS=0, PROBE_TODO=1, PROBE_FS_SEARCH=1, PROBE_PACE_MS,
// PROBE_RUNNER=missing; anything else is an error naming it.
func ParseSettings(env string) (Settings, error) {
	var s Settings
	for _, kv := range strings.Fields(env) {
		k, v, _ := strings.Cut(kv, "=")
		switch {
		case k == "DSH_PERMISSION_MODE" && (v == DangerFullAccess || v == WorkspaceWrite || v == ReadOnly):
			s.Mode = v
		case k == "PROBE_TOOLS_MODE" && (v == ToolsCode || v == ToolsBoth):
			s.ToolsMode = v
		case kv == "PROBE_SPILL=1":
			s.Spill = true
		case kv == "PROBE_SQ=1":
			s.SessionQuery = true
		case kv == "PROBE_HOOKS=0":
			s.NoHooks = true
		case kv == "PROBE_TODO=1":
			s.Todo = true
		case kv == "PROBE_FS_SEARCH=1":
			s.FSSearch = true
		case kv == "PROBE_RUNNER=missing":
			s.MissingRunner = true
		case k == "PROBE_PACE_MS":
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				return Settings{}, fmt.Errorf("setting %q: want a number of milliseconds >= 0", kv)
			}
			s.PaceMs = n
		default:
			return Settings{}, fmt.Errorf("setting %q: not one of DSH_PERMISSION_MODE=<mode>, PROBE_TOOLS_MODE=code|both, PROBE_SPILL=1, PROBE_SQ=1, PROBE_HOOKS=0, PROBE_TODO=1, PROBE_FS_SEARCH=1, PROBE_PACE_MS=<n>, PROBE_RUNNER=missing", kv)
		}
	}
	return s, nil
}

// String is the env form ParseSettings reads ("" for the default profile).
func (s Settings) String() string {
	var kv []string
	if s.Mode != "" {
		kv = append(kv, "DSH_PERMISSION_MODE="+s.Mode)
	}
	if s.ToolsMode != "" {
		kv = append(kv, "PROBE_TOOLS_MODE="+s.ToolsMode)
	}
	if s.Spill {
		kv = append(kv, "PROBE_SPILL=1")
	}
	if s.SessionQuery {
		kv = append(kv, "PROBE_SQ=1")
	}
	if s.NoHooks {
		kv = append(kv, "PROBE_HOOKS=0")
	}
	if s.Todo {
		kv = append(kv, "PROBE_TODO=1")
	}
	if s.FSSearch {
		kv = append(kv, "PROBE_FS_SEARCH=1")
	}
	if s.PaceMs > 0 {
		kv = append(kv, "PROBE_PACE_MS="+strconv.Itoa(s.PaceMs))
	}
	if s.MissingRunner {
		kv = append(kv, "PROBE_RUNNER=missing")
	}
	return strings.Join(kv, " ")
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
// dshsim.replay.json (or upstream's suite settings), pacing from pacedModel.
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
	if set.PacedModel {
		s.PaceMs = 100
	}
	switch {
	case set.DiffBasisMaxBytes != 0:
		return Settings{}, fmt.Errorf("%s: diffBasisMaxBytes: the oracle's overlay has no switch for it", rec.Name)
	case set.BashTimeoutMs != 0:
		return Settings{}, fmt.Errorf("%s: bashTimeoutMs: the oracle's overlay has no switch for it", rec.Name)
	case set.MaxConcurrentJobsPerOwner != nil && *set.MaxConcurrentJobsPerOwner != defaultMaxJobs:
		return Settings{}, fmt.Errorf("%s: maxConcurrentJobsPerOwner %d: the oracle's overlay runs with upstream's default %d only", rec.Name, *set.MaxConcurrentJobsPerOwner, defaultMaxJobs)
	case set.Profile != "" && set.Profile != recording.ProfileDefault && set.Profile != recording.ProfileFSSearch:
		return Settings{}, fmt.Errorf("%s: profile %q: the oracle's overlay has the default and fs-search profiles only", rec.Name, set.Profile)
	case set.Prepare != "" || len(set.ServedTools) > 0:
		return Settings{}, fmt.Errorf("%s: a workspace preparation or served tools: the oracle's overlay has neither", rec.Name)
	case set.SandboxBackend == recording.BackendLandlock && set.LandlockRunner == MissingRunnerPath && set.LandlockABI == nil:
		s.MissingRunner = true
	case set.SandboxBackend != "" || set.LandlockRunner != "" || set.LandlockABI != nil:
		return Settings{}, fmt.Errorf("%s: a sandbox backend setting: the oracle's overlay runs bash through the passthrough runner, or a missing one", rec.Name)
	}
	return s, nil
}

// calls reports whether the recording's model calls one of the tools.
func calls(rec *recording.Recording, names ...string) bool {
	for _, e := range rec.Events {
		if e.Type != "tool/call" {
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
