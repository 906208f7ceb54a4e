package recording

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestSettingsValidation(t *testing.T) {
	tests := []struct {
		name, json string
		line       int
		field      string
		problem    string // substring; "" means valid
	}{
		{name: "the default profile", json: `{}`},
		{name: "spill off", json: `{"spillMaxInlineBytes": 0}`},
		{name: "a negative spill cap", json: "{\n\"spillMaxInlineBytes\": -1}", line: 2, field: "spillMaxInlineBytes", problem: "must be >= 0, got -1"},
		{name: "a negative diff bound", json: `{"diffBasisMaxBytes": -1}`, line: 1, field: "diffBasisMaxBytes", problem: "must be >= 0"},
		{name: "a negative bash timeout", json: `{"bashTimeoutMs": -5}`, line: 1, field: "bashTimeoutMs", problem: "must be >= 0"},
		{name: "a job bound of one", json: `{"maxConcurrentJobsPerOwner": 1}`},
		{name: "a job bound of zero", json: `{"maxConcurrentJobsPerOwner": 0}`, line: 1, field: "maxConcurrentJobsPerOwner", problem: "must be >= 1, got 0"},
		{name: "bwrap", json: `{"sandboxBackend": "bwrap"}`},
		{name: "an unknown backend", json: `{"sandboxBackend": "seatbelt"}`, line: 1, field: "sandboxBackend", problem: `want "bwrap" or "landlock", got "seatbelt"`},
		{name: "a capped Landlock runner", json: `{"sandboxBackend": "landlock", "landlockAbi": 1}`},
		{name: "ABI zero", json: `{"sandboxBackend": "landlock", "landlockAbi": 0}`, line: 1, field: "landlockAbi", problem: "must be >= 1, got 0"},
		{name: "an ABI cap without the landlock backend", json: "{\n\"sandboxBackend\": \"bwrap\",\n\"landlockAbi\": 3}", line: 3, field: "landlockAbi", problem: `needs "sandboxBackend": "landlock"`},
		{name: "an ABI cap with the platform chain", json: `{"landlockAbi": 3}`, line: 1, field: "landlockAbi", problem: `needs "sandboxBackend": "landlock"`},
		{name: "a runner in the workspace", json: `{"sandboxBackend": "landlock", "landlockRunner": "{{cwd}}/.dsh-missing-sandbox-runner"}`},
		{name: "an absolute runner", json: `{"sandboxBackend": "landlock", "landlockRunner": "/usr/local/bin/landlock-run"}`},
		{name: "a relative runner", json: `{"sandboxBackend": "landlock", "landlockRunner": "bin/landlock-run"}`, line: 1, field: "landlockRunner", problem: "want an absolute path or {{cwd}}/..."},
		{name: "{{cwd}} not followed by a separator", json: `{"sandboxBackend": "landlock", "landlockRunner": "{{cwd}}runner"}`, line: 1, field: "landlockRunner", problem: "want an absolute path"},
		{name: "another placeholder", json: `{"sandboxBackend": "landlock", "landlockRunner": "/x/{{home}}/r"}`, line: 1, field: "landlockRunner", problem: "unknown placeholder {{home}}"},
		{name: "a runner without the landlock backend", json: `{"landlockRunner": "/r"}`, line: 1, field: "landlockRunner", problem: `needs "sandboxBackend": "landlock"`},
		{name: "an unknown key", json: "{\n\"sandboxbackend\": \"bwrap\"}", line: 2, field: "sandboxbackend", problem: "unknown key (known: spillMaxInlineBytes"},
		{name: "the first of two unknown keys", json: "{\n\"zeta\": 1,\n\"alpha\": 2}", line: 2, field: "zeta", problem: "unknown key"},
		{name: "a wrong type", json: `{"sessionQuery": "yes"}`, line: 1, field: "sessionQuery", problem: "want boolean"},
		{name: "a retry policy", json: `{"retryPolicy": {"mode": "normal", "maxRetries": 2, "backoff": {"initialDelayMs": 1, "maxDelayMs": 1, "jitterRatio": 0}}}`},
		{name: "an always policy", json: `{"retryPolicy": {"mode": "always"}}`},
		{name: "an unknown retry mode", json: `{"retryPolicy": {"mode": "sometimes"}}`, line: 1, field: "retryPolicy", problem: `mode: want "normal" or "always", got "sometimes"`},
		{name: "always with a bound", json: `{"retryPolicy": {"mode": "always", "maxRetries": 1}}`, line: 1, field: "retryPolicy", problem: "takes no maxRetries"},
		{name: "a negative retry bound", json: `{"retryPolicy": {"mode": "normal", "maxRetries": -1}}`, line: 1, field: "retryPolicy", problem: "maxRetries must be >= 0"},
		{name: "a jitter over 1", json: `{"retryPolicy": {"mode": "normal", "backoff": {"jitterRatio": 1.5}}}`, line: 1, field: "retryPolicy", problem: "jitterRatio must be <= 1"},
		{name: "an unknown retry key", json: `{"retryPolicy": {"mode": "normal", "max": 1}}`, line: 1, field: "max", problem: "unknown field"},
		{name: "a title model", json: `{"sessionTitleLlm": {"provider": "p", "model": "m", "targetWords": 5, "targetCjkCharacters": 10, "maxInputBytes": 4096, "maxOutputTokens": 32}}`},
		{name: "a title model without a route", json: `{"sessionTitleLlm": {"targetWords": 5, "targetCjkCharacters": 10, "maxInputBytes": 4096, "maxOutputTokens": 32}}`, line: 1, field: "sessionTitleLlm", problem: "provider and model are required"},
		{name: "a title model without a budget", json: `{"sessionTitleLlm": {"provider": "p", "model": "m"}}`, line: 1, field: "sessionTitleLlm", problem: "must be positive integers"},
		{name: "workspace instructions off", json: `{"workspaceContext": {"maxBytes": 0}}`},
		{name: "a negative instruction budget", json: `{"workspaceContext": {"maxBytes": -1}}`, line: 1, field: "workspaceContext", problem: "maxBytes must be >= 0"},
		{name: "a compaction path outside the workspace", json: `{"workspaceContext": {"compactBaselineAtRead": "../x"}}`, line: 1, field: "workspaceContext", problem: "want a path inside the workspace"},
		{name: "the pruner with upstream's defaults", json: `{"toolResultPruner": {}}`},
		{name: "a pruner whose head, marker and tail exceed its threshold", json: `{"toolResultPruner": {"thresholdChars": 100}}`, line: 1, field: "toolResultPruner", problem: "thresholdChars: headChars + marker + tailChars (5159) must be at most thresholdChars (100)"},
		{name: "upstream's workspace path", json: `{"upstreamCwd": "/tmp/run/ws"}`},
		{name: "a relative upstream workspace path", json: `{"upstreamCwd": "tmp/run/ws"}`, line: 1, field: "upstreamCwd", problem: `must be an absolute path, got "tmp/run/ws"`},
		{name: "a known preparation", json: `{"prepare": "delimiter-path"}`},
		{name: "the retired preparation key", json: `{"prepareWorkspace": "prepareDelimiterPathWorkspace"}`, line: 1, field: "prepareWorkspace", problem: "unknown key"},
		{name: "a profile", json: `{"profile": "fs-search", "prepare": "fs-search-tree"}`},
		{name: "an unknown profile", json: "{\n\"profile\": \"web2\"}", line: 2, field: "profile", problem: `unknown profile "web2" (known: advanced, default, fs-search, goal, image`},
		{name: "an unknown preparation", json: `{"prepare": "seed"}`, line: 1, field: "prepare", problem: `unknown preparation "seed"`},
		{name: "a served tool beyond the stack", json: `{"servedTools": ["cordis_inspect_query", "pwsh"]}`},
		{name: "a served bash is refused", json: "{\n\"servedTools\": [\"pwsh\", \"bash\"]}", line: 2, field: "servedTools", problem: `servedTools[1] "bash": a served body can never stand in for a tool of the safety stack`},
		{name: "a served read is refused", json: `{"servedTools": ["read"]}`, line: 1, field: "servedTools", problem: "safety stack"},
		{name: "symlinks", json: `{"symlinks": ["AGENTS.md", "nested/AGENTS.md"]}`},
		{name: "one-shot subagent without run_in_background", json: `{"subagentTools": {"subagent": {"backgroundMode": "one-shot", "enableRunInBackground": false}, "subagent_fork": {"backgroundMode": "continuable"}}}`},
		{name: "a delegation tool the composition lacks", json: "{\n\"subagentTools\": {\"subagent_codex\": {}}}", line: 2, field: "subagentTools", problem: `"subagent_codex" is not a delegation tool of the composition (known: subagent, subagent_fork)`},
		{name: "an unknown background mode", json: `{"subagentTools": {"subagent": {"backgroundMode": "job"}}}`, line: 1, field: "subagentTools", problem: `subagent.backgroundMode: want "continuable" or "one-shot", got "job"`},
		{name: "an unknown subagent knob", json: `{"subagentTools": {"subagent": {"maxDepth": 2}}}`, line: 1, field: "maxDepth", problem: "unknown field"},
		{name: "todo sequential", json: `{"todoAllowParallelInProgress": false, "settlementMarker": true}`},
		{name: "a symlink outside the workspace", json: "{\n\"symlinks\": [\"AGENTS.md\", \"../AGENTS.md\"]}", line: 2, field: "symlinks", problem: `symlinks[1] "../AGENTS.md": want a clean path inside the workspace`},
		{name: "an absolute symlink path", json: `{"symlinks": ["/etc/AGENTS.md"]}`, line: 1, field: "symlinks", problem: "want a clean path inside the workspace"},
		{name: "an unclean symlink path", json: `{"symlinks": ["nested/../AGENTS.md"]}`, line: 1, field: "symlinks", problem: "want a clean path inside the workspace"},
		{name: "a symlink listed twice", json: `{"symlinks": ["AGENTS.md", "AGENTS.md"]}`, line: 1, field: "symlinks", problem: `symlinks[1] "AGENTS.md": listed twice`},
		{name: "a served job tool is refused", json: `{"servedTools": ["job_output"]}`, line: 1, field: "servedTools", problem: "safety stack"},
		{name: "a served run_code is refused", json: `{"servedTools": ["run_code"]}`, line: 1, field: "servedTools", problem: "safety stack"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseSettings("rec", []byte(tc.json))
			if tc.problem == "" {
				if err != nil {
					t.Fatalf("valid settings refused: %v", err)
				}
				return
			}
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("err = %v, want an *Error", err)
			}
			if e.File != SettingsFile || e.Line != tc.line || e.Field != tc.field || !strings.Contains(e.Problem, tc.problem) {
				t.Errorf("got %s:%d field %s: %s; want line %d field %s problem containing %q", e.File, e.Line, e.Field, e.Problem, tc.line, tc.field, tc.problem)
			}
		})
	}
}

func TestRunnerExpandsCwd(t *testing.T) {
	tests := []struct{ runner, ws, want string }{
		{"{{cwd}}/.dsh-missing-sandbox-runner", "/tmp/acp-snap-cwd-abc123", "/tmp/acp-snap-cwd-abc123/.dsh-missing-sandbox-runner"},
		{"{{cwd}}/r", "/tmp/ws/", "/tmp/ws/r"},
		{"/opt/landlock-run", "/tmp/ws", "/opt/landlock-run"},
		{"", "/tmp/ws", ""},
	}
	for _, tc := range tests {
		if got := (Settings{SandboxKnobs: SandboxKnobs{LandlockRunner: tc.runner}}).Runner(tc.ws); got != tc.want {
			t.Errorf("Runner(%q) in %s = %q, want %q", tc.runner, tc.ws, got, tc.want)
		}
	}
}

// TestEverySettingIsDocumented: SettingKeys has exactly one row per JSON key
// of Settings, each naming the upstream scenario it mirrors.
func TestEverySettingIsDocumented(t *testing.T) {
	var keys []string
	for _, f := range reflect.VisibleFields(reflect.TypeFor[Settings]()) {
		if f.Anonymous { // a group: its fields are the keys
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		keys = append(keys, name)
	}
	var documented []string
	for _, k := range SettingKeys {
		documented = append(documented, k.Name)
		if k.Value == "" || k.Mirrors == "" || k.Meaning == "" {
			t.Errorf("key %s lacks its value, scenario or meaning", k.Name)
		}
	}
	slices.Sort(keys)
	documented = slices.Clone(documented)
	slices.Sort(documented)
	if len(keys) < 30 || strings.Join(keys, ",") != strings.Join(documented, ",") {
		t.Errorf("Settings keys %v, documented %v", keys, documented)
	}
}

// The settlement marker is emulated for upstream's delegating scenarios, by
// name, and for any other recording only by its key.
func TestSettlementMarkerByNameOrKey(t *testing.T) {
	for _, tc := range []struct {
		name string
		set  Settings
		want bool
	}{
		{"subagent-list-agents", Settings{}, true},
		{"workflow-run", Settings{}, true},
		{"subagent-oracle-spawn", Settings{}, false},
		{"subagent-list-agents-copy", Settings{}, false},
		{"subagent-oracle-spawn", Settings{DelegationKnobs: DelegationKnobs{SettlementMarker: true}}, true},
	} {
		if got := (&Recording{Name: tc.name, SettingsSource: SettingsSource{Settings: tc.set}}).Marks(); got != tc.want {
			t.Errorf("%s %+v: Marks %v, want %v", tc.name, tc.set, got, tc.want)
		}
	}
}
