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
		{"confining executor, jobs mounted (base bundle)", Config{}, Deps{Policy: fixedPolicy(sandbox.ReadOnly, "/"), Confiner: nopConfiner, Jobs: jobs.New(jobs.Options{})},
			[]string{`"sandbox_permissions"`, `"justification"`, `"run_in_background"`, `"enum":["workspace-write","danger-full-access"]`}, nil, TimeoutDescriptionPromote},
		{"non-confining executor, no jobs", Config{}, Deps{}, nil, []string{"sandbox_permissions", "justification"}, TimeoutDescriptionKill},
		{"background disabled", Config{EnableRunInBackground: no()}, Deps{Jobs: jobs.New(jobs.Options{})}, nil, []string{"run_in_background"}, TimeoutDescriptionKill},
		{"promotion off", Config{PromoteOnTimeout: no()}, Deps{Jobs: jobs.New(jobs.Options{})}, []string{"run_in_background"}, nil, TimeoutDescriptionKill},
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "prompt section tool:bash: %s\n", PromptSection)
	for _, c := range cases {
		def := newTool(t, c.cfg, c.deps).Definition()
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
		if !strings.Contains(s, c.timeout) || !strings.Contains(s, `"required":["command","description"]`) || def.Description != Description || def.Name != "bash" {
			t.Errorf("%s: definition = %+v", c.name, def)
		}
		var params bytes.Buffer
		json.Indent(&params, def.Parameters, "", "  ")
		fmt.Fprintf(&b, "\n== %s\nname: %s\ndescription: %s\nparameters:\n%s\n", c.name, def.Name, def.Description, params.String())
	}
	for _, tl := range JobTools(nil) {
		var params bytes.Buffer
		json.Indent(&params, tl.Parameters, "", "  ")
		fmt.Fprintf(&b, "\n== %s\ndescription: %s\nparameters:\n%s\n", tl.Name, tl.Description, params.String())
	}
	harness.Golden(t, "testdata", "schema.golden", b.Bytes())
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
