package pwsh

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/pipeline/pipelinetest"
)

// fakePwsh is a stand-in program named pwsh (constructed: this machine has
// no PowerShell) that runs its -Command argument with sh, so the body's
// argv, workdir and rendering are exercised for real.
func fakePwsh(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "pwsh")
	script := "#!/bin/sh\n[ \"$1 $2 $3 $4\" = \"-NoLogo -NoProfile -NonInteractive -Command\" ] || { echo bad argv >&2; exit 9; }\nexec sh -c \"$5\"\n"
	if err := os.WriteFile(p, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestRealBody(t *testing.T) {
	prog := fakePwsh(t)
	if !Available(prog) {
		t.Fatal("the probe refused the stand-in")
	}
	if Available(filepath.Join(t.TempDir(), "absent")) {
		t.Fatal("an absent program is available")
	}
	ws := t.TempDir()
	reg := pipelinetest.Registry(t, def(Config{Program: prog, Workspace: ws}))
	run := func(args string) pipeline.Result {
		return reg.Execute(pipeline.NewCall("c", Name, json.RawMessage(args), nil, context.Background()))
	}
	if r := run(`{"command":"printf PWSH_OK","description":"d"}`); r.IsError || r.Text() != "PWSH_OK" {
		t.Fatalf("%+v", r)
	}
	if r := run(`{"command":"pwd; echo e >&2; exit 3","description":"d"}`); r.Text() != ws+"\n[stderr]\ne\n[exit code: 3]" {
		t.Fatalf("%q", r.Text())
	}
	if r := run(`{"command":"sleep 5","description":"d","timeoutMs":100}`); !strings.Contains(r.Text(), "[timed out after 100ms]") {
		t.Fatalf("%q", r.Text())
	}
	if r := run(`{"command":"x"}`); !r.IsError || !strings.Contains(r.Text(), `missing required property "description"`) {
		t.Fatalf("%+v", r)
	}
	for prog, unhosted := range map[string]bool{prog: false, filepath.Join(t.TempDir(), "absent"): true} {
		if regs, _ := New(Config{Program: prog}); regs[0].Unhosted != unhosted {
			t.Errorf("%s: unhosted %v, want %v", prog, regs[0].Unhosted, unhosted)
		}
	}
	p := def(Config{Persistent: true, Program: prog})
	if p.Description != PersistentDescription || !strings.Contains(string(p.Parameters), "Relative path is preferred") {
		t.Fatalf("persistent %+v", p)
	}
}

// def is the definition New registers for cfg.
func def(cfg Config) pipeline.Tool {
	regs, _ := New(cfg)
	return regs[0].Def
}
