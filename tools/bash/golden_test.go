package bash

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshsim/dshsim/harness"
	"github.com/dshsim/dshsim/sandbox"
	"github.com/dshsim/dshsim/sandbox/sandboxtest"
	"github.com/dshsim/dshsim/tools/jobs"
)

// TestSchemaGolden pins the model-facing definition (description and
// parameters) for each composition, and checks in each what the schema must
// and must not offer.
func TestSchemaGolden(t *testing.T) {
	cases := []struct {
		name        string
		cfg         Config
		deps        Deps
		has, hasNot []string
		timeout     string
	}{
		{"confining executor, jobs mounted (base bundle)", Config{}, Deps{Policy: fixedPolicy(sandbox.ReadOnly, "/"), Confiner: nopConfiner, Jobs: jobs.NewRegistry(jobs.Options{})},
			[]string{`"sandbox_permissions"`, `"justification"`, `"run_in_background"`, `"enum":["workspace-write","danger-full-access"]`}, nil, TimeoutDescriptionPromote},
		{"non-confining executor, no jobs", Config{}, Deps{}, nil, []string{"sandbox_permissions", "justification"}, TimeoutDescriptionKill},
		{"background disabled", Config{EnableRunInBackground: no()}, Deps{Jobs: jobs.NewRegistry(jobs.Options{})}, nil, []string{"run_in_background"}, TimeoutDescriptionKill},
		{"promotion off", Config{PromoteOnTimeout: no()}, Deps{Jobs: jobs.NewRegistry(jobs.Options{})}, []string{"run_in_background"}, nil, TimeoutDescriptionKill},
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "prompt section tool:bash: %s\n", PromptSection)
	for _, c := range cases {
		def := newTool(t, c.cfg, c.deps).definition()
		s := string(def.Parameters)
		for _, h := range c.has {
			if !strings.Contains(s, h) {
				t.Errorf("%s: schema lacks %s: %s", c.name, h, s)
			}
		}
		for _, h := range c.hasNot {
			if strings.Contains(s, h) {
				t.Errorf("%s: schema has %s", c.name, h)
			}
		}
		if !strings.Contains(s, c.timeout) || !strings.Contains(s, `"required":["command","description"]`) || def.Description != Description(c.cfg.EnableRunInBackground == nil || *c.cfg.EnableRunInBackground, c.deps.Confiner != nil) || def.Name != "bash" {
			t.Errorf("%s: definition = %+v", c.name, def)
		}
		var params bytes.Buffer
		json.Indent(&params, def.Parameters, "", "  ")
		fmt.Fprintf(&b, "\n== %s\nname: %s\ndescription: %s\nparameters:\n%s\n", c.name, def.Name, def.Description, params.String())
	}
	harness.Golden(t, "testdata", "schema.golden", b.Bytes())
}

// TestDescriptionVariants: the description as upstream's recordings show it
// for a confining executor with background jobs, and its two variants: no
// confining executor (it stops after the background sentence) and
// background disabled (the sentence replaced).
func TestDescriptionVariants(t *testing.T) {
	const recorded = "Execute a bash command (`bash -c`) and return its stdout/stderr. Each call runs in a fresh shell: no state (cwd, variables, functions) persists between calls — pass `workdir` instead of using `cd`. Non-zero exits are reported as `[exit code: N]`. Current harness environment facts are exposed through managed `$DSH_*` variables; inspect them when needed. Commands may run under a file sandbox; a blocked file operation is reported as `[sandbox: file access denied under <mode> mode]` — a policy denial, not a bug in the command; do not retry another way. Long output is truncated to its tail; the full output is saved to a file whose path is reported when available. Set `run_in_background: true` for long-running commands: the call returns a job id immediately; read its output with `job_output` and stop it with `job_kill`. Attempting a command the sandbox may deny is safe and expected: run it and read the marker rather than assuming the denial. When a command is denied and a wider mode would let it succeed, escalate immediately in the same turn — the one sanctioned exception to a denial: retry the exact same command once with `sandbox_permissions` (the narrowest wider mode that suffices) plus a one-sentence `justification`. Do not detour through chat to ask permission first — the approval prompt raised by that retry is how the user consents. If the session states approval prompts are disabled, there is no exception: a denial is final — do not set `sandbox_permissions`. Never escalate speculatively: ground the request in a real denial — normally the one this command just hit; escalating up front is fine only when this session already denied the same access. A rejected escalation is final for that command — stop and explain, never work around it — but it does not forbid attempting or escalating other commands later."
	if got := Description(true, true); got != recorded {
		t.Errorf("confining, background:\n%s\nwant\n%s", got, recorded)
	}
	cut := recorded[:strings.Index(recorded, " Attempting")]
	if got := Description(true, false); got != cut || !strings.HasSuffix(got, "stop it with `job_kill`.") {
		t.Errorf("not confining:\n%s", got)
	}
	noBg := strings.Replace(recorded, "Set `run_in_background: true` for long-running commands: the call returns a job id immediately; read its output with `job_output` and stop it with `job_kill`.",
		"Background execution is not available; long-running commands must finish within the timeout.", 1)
	if got := Description(false, true); got != noBg {
		t.Errorf("background disabled:\n%s", got)
	}
}

// TestResultsGolden runs real commands (bwrap where confined) and pins the
// exact text of each result, the workspace normalised to <ws>.
func TestResultsGolden(t *testing.T) {
	sandboxtest.RequireBwrap(t)
	ws := t.TempDir()
	cases := []struct {
		name string
		mode sandbox.Mode
		cmd  string
		args []any
	}{
		{"success", sandbox.DangerFullAccess, "echo hello", nil},
		{"no output", sandbox.DangerFullAccess, "true", nil},
		{"stderr only", sandbox.DangerFullAccess, "echo warning >&2", nil},
		{"stdout and stderr", sandbox.DangerFullAccess, "printf out; printf err >&2", nil},
		{"non-zero exit", sandbox.DangerFullAccess, "echo failing; exit 3", nil},
		{"killed by signal", sandbox.DangerFullAccess, "kill -TERM $$", nil},
		{"timeout promoted", sandbox.DangerFullAccess, "echo started; while [ ! -e gate ]; do sleep 0.05; done", []any{"timeoutMs", 1500}},
		{"workspace-write inside", sandbox.WorkspaceWrite, "echo ok > f && cat f", nil},
		{"workspace-write outside denied", sandbox.WorkspaceWrite, "echo x > /etc/dsh-golden-denied", nil},
		{"read-only denied", sandbox.ReadOnly, "touch g", nil},
		{"command failure under the sandbox", sandbox.ReadOnly, "ls /nonexistent-dir", nil},
	}
	p := provider(t, sandbox.Config{Chain: []string{"bwrap"}})
	reg, _ := newJobs(t)
	var b bytes.Buffer
	for _, c := range cases {
		tool := newTool(t, Config{}, Deps{Policy: fixedPolicy(c.mode, ws), Confiner: p, Jobs: reg})
		got, err := run(t, tool, call(agent(t, "golden", ws), cmd(c.cmd, c.args...)))
		if err != nil {
			got = "Error: " + err.Error()
		}
		fmt.Fprintf(&b, "== %s (%s): %s\n%s\n", c.name, c.mode, c.cmd, got)
	}
	os.WriteFile(filepath.Join(ws, "gate"), nil, 0o600) // let the promoted job finish
	harness.Golden(t, "testdata", "results.golden", []byte(strings.ReplaceAll(b.String(), ws, "<ws>")))
}
