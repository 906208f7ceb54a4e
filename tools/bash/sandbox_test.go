package bash

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dshsim/dshsim/escalation"
	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/sandbox"
	"github.com/dshsim/dshsim/sandbox/sandboxtest"
	"github.com/dshsim/dshsim/sandbox/spawn"
	"github.com/dshsim/dshsim/tools/jobs"
)

func TestMain(m *testing.M) { os.Exit(sandboxtest.Main(m)) }

func provider(t *testing.T, cfg sandbox.Config) *sandbox.Provider {
	t.Helper()
	p, err := sandbox.NewProvider(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// recorder wraps a real provider and records the policy of every Confine.
type recorder struct {
	*sandbox.Provider // the confiner it records the calls of
	mu                sync.Mutex
	modes             []sandbox.Mode
	p                 *sandbox.Provider
}

// constructed is a constructed confiner: f answers every call. spawn's
// Confiner is closed to the sandbox tree, so it wraps one of ours (a nil
// interface value: only its Sealed method is promoted, and nothing calls
// it).
type constructed struct {
	spawn.Confiner
	f func(ctx context.Context, argv []string, p sandbox.Policy) (sandbox.ConfinedArgv, error)
}

// confinerFunc is the constructed confiner that answers with f.
func confinerFunc(f func(ctx context.Context, argv []string, p sandbox.Policy) (sandbox.ConfinedArgv, error)) constructed {
	return constructed{f: f}
}

// nopConfiner is a constructed confiner for compositions that never run a
// command (schemas, construction errors).
var nopConfiner = confinerFunc(func(context.Context, []string, sandbox.Policy) (sandbox.ConfinedArgv, error) {
	return sandbox.ConfinedArgv{}, nil
})

func (c constructed) Confine(ctx context.Context, argv []string, p sandbox.Policy) (sandbox.ConfinedArgv, error) {
	return c.f(ctx, argv, p)
}

func newRecorder(p *sandbox.Provider) *recorder { return &recorder{Provider: p, p: p} }

func (r *recorder) Confine(ctx context.Context, argv []string, pol sandbox.Policy) (sandbox.ConfinedArgv, error) {
	r.mu.Lock()
	r.modes = append(r.modes, pol.Mode)
	r.mu.Unlock()
	return r.p.Confine(ctx, argv, pol)
}

func (r *recorder) calls() []sandbox.Mode {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]sandbox.Mode(nil), r.modes...)
}

// approver is a constructed user: it answers every request with outcome.
type approver struct {
	outcome pipeline.ApprovalOutcome
	mu      sync.Mutex
	reasons []string
}

func (a *approver) Request(ctx context.Context, req pipeline.ApprovalRequest) (pipeline.ApprovalOutcome, error) {
	a.mu.Lock()
	a.reasons = append(a.reasons, req.Reason)
	a.mu.Unlock()
	return a.outcome, nil
}

func hint() string { return sandbox.EscalationHint("command") }

// escalationRig is a bash tool under a standing mode, confined by a real
// bwrap provider that records every mode it confines, escalating through a
// constructed user who answers every prompt with one outcome.
type escalationRig struct {
	tool *Tool
	ws   string
	rec  *recorder
	user *approver
}

func newEscalationRig(t *testing.T, mode sandbox.Mode, outcome pipeline.ApprovalOutcome, reg *jobs.Registry) escalationRig {
	t.Helper()
	sandboxtest.RequireBwrap(t)
	r := escalationRig{ws: t.TempDir(), rec: newRecorder(provider(t, sandbox.Config{Chain: []string{"bwrap"}})), user: &approver{outcome: outcome}}
	r.tool = newTool(t, Config{}, Deps{Policy: fixedPolicy(mode, r.ws), Confiner: r.rec, Escalate: escalation.New(r.user), Jobs: reg})
	return r
}

func TestRealSandboxRendering(t *testing.T) {
	outside := "/etc/dsh-bash-tool-" + filepath.Base(t.TempDir())
	denied := func(mode sandbox.Mode, target, refusal string) string {
		return "[stderr]\ntouch: cannot touch '" + target + "': " + refusal + "\n" + sandbox.DenialMarker(mode) + "\n" + hint() + "\n[exit code: 1]"
	}
	type rendering struct {
		name    string
		backend string
		mode    sandbox.Mode
		command string
		want    string
		created string // a path that must exist afterwards ("" = none)
	}
	var tests []rendering
	for _, b := range []struct{ backend, refusal string }{{"bwrap", "Read-only file system"}, {"landlock", "Permission denied"}} {
		tests = append(tests,
			rendering{b.backend + " workspace write inside succeeds", b.backend, sandbox.WorkspaceWrite, "echo hi > inside && cat inside", "hi\n", "inside"},
			rendering{b.backend + " workspace write outside is denied with marker and hint", b.backend, sandbox.WorkspaceWrite, "touch " + outside, denied(sandbox.WorkspaceWrite, outside, b.refusal), ""},
			rendering{b.backend + " read-only denies a workspace write", b.backend, sandbox.ReadOnly, "touch inside", denied(sandbox.ReadOnly, "inside", b.refusal), ""},
			rendering{b.backend + " command failure is only an exit code", b.backend, sandbox.WorkspaceWrite, "grep -q nothing /dev/null", "(no output)\n[exit code: 1]", ""},
		)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws := t.TempDir()
			cfg := sandbox.Config{Chain: []string{tt.backend}}
			if tt.backend == "landlock" {
				sandboxtest.RequireLandlock(t, 1)
				cfg.LauncherPath = sandboxtest.Runner(t)
			} else {
				sandboxtest.RequireBwrap(t)
			}
			p := provider(t, cfg)
			if b, _ := p.Selected(); b != tt.backend {
				t.Fatalf("provider selected %q", b)
			}
			tool := newTool(t, Config{}, Deps{Policy: fixedPolicy(tt.mode, ws), Confiner: p})
			got, err := run(t, tool, call(agent(t, "s", ws), cmd(tt.command)))
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
			if _, err := os.Stat(outside); err == nil {
				os.Remove(outside)
				t.Fatal("the sandbox let a write outside the workspace through")
			}
			if tt.created != "" {
				if _, err := os.Stat(filepath.Join(ws, tt.created)); err != nil {
					t.Errorf("allowed write missing on the host: %v", err)
				}
			} else if _, err := os.Stat(filepath.Join(ws, "inside")); err == nil {
				t.Error("denied write reached the host")
			}
		})
	}
}

func TestDangerFullAccessBypassesTheProvider(t *testing.T) {
	ws := t.TempDir()
	rec := newRecorder(provider(t, sandbox.Config{Chain: []string{"bwrap"}}))
	tool := newTool(t, Config{}, Deps{Policy: fixedPolicy(sandbox.DangerFullAccess, ws), Confiner: rec})
	got, err := run(t, tool, call(agent(t, "s", ws), cmd("echo free > /tmp/dsh-bash-tool-dfa-$$ && cat /tmp/dsh-bash-tool-dfa-$$ && rm /tmp/dsh-bash-tool-dfa-$$")))
	if err != nil || got != "free\n" {
		t.Fatalf("got %q, %v", got, err)
	}
	if len(rec.calls()) != 0 {
		t.Errorf("provider consulted for danger-full-access: %v", rec.calls())
	}
}

func TestEscalation(t *testing.T) {
	t.Run("granted mode applies to that one call only", func(t *testing.T) {
		r := newEscalationRig(t, sandbox.ReadOnly, pipeline.AllowedOnce, nil)
		tool, ws, rec, user := r.tool, r.ws, r.rec, r.user
		ag := agent(t, "s", ws)
		got, err := run(t, tool, call(ag, cmd("touch granted && echo ok", "sandbox_permissions", "workspace-write", "justification", "the user asked for the file")))
		if err != nil || got != "ok\n" {
			t.Fatalf("escalated call: %q, %v", got, err)
		}
		if len(user.reasons) != 1 || user.reasons[0] != "escalate sandbox to workspace-write: the user asked for the file" {
			t.Errorf("approval reasons = %q", user.reasons)
		}
		got, err = run(t, tool, call(ag, cmd("touch again")))
		if err != nil || !strings.Contains(got, sandbox.DenialMarker(sandbox.ReadOnly)) {
			t.Errorf("next call not back under read-only: %q, %v", got, err)
		}
		if m := rec.calls(); len(m) != 2 || m[0] != sandbox.WorkspaceWrite || m[1] != sandbox.ReadOnly {
			t.Errorf("modes confined = %v", m)
		}
		if _, err := os.Stat(filepath.Join(ws, "granted")); err != nil {
			t.Error("granted write missing")
		}
		if _, err := os.Stat(filepath.Join(ws, "again")); err == nil {
			t.Error("unescalated write went through")
		}
	})
	t.Run("rejected escalation runs nothing", func(t *testing.T) {
		r := newEscalationRig(t, sandbox.WorkspaceWrite, pipeline.Rejected, nil)
		tool, ws, rec := r.tool, r.ws, r.rec
		_, err := run(t, tool, call(agent(t, "s", ws), cmd("touch rejected", "sandbox_permissions", "danger-full-access", "justification", "why")))
		if err == nil || !strings.HasPrefix(err.Error(), `the user rejected escalating this command to "danger-full-access"`) {
			t.Errorf("err = %v", err)
		}
		if len(rec.calls()) != 0 {
			t.Error("provider consulted after a rejection")
		}
		if _, err := os.Stat(filepath.Join(ws, "rejected")); err == nil {
			t.Error("rejected command ran")
		}
	})
	t.Run("same mode request is a no-op without prompt", func(t *testing.T) {
		r := newEscalationRig(t, sandbox.WorkspaceWrite, pipeline.AllowedOnce, nil)
		tool, ws, rec, user := r.tool, r.ws, r.rec, r.user
		got, err := run(t, tool, call(agent(t, "s", ws), cmd("touch same && echo ok", "sandbox_permissions", "workspace-write")))
		if err != nil || got != "ok\n" {
			t.Fatalf("got %q, %v", got, err)
		}
		if len(user.reasons) != 0 {
			t.Errorf("prompted: %q", user.reasons)
		}
		if m := rec.calls(); len(m) != 1 || m[0] != sandbox.WorkspaceWrite {
			t.Errorf("modes = %v", m)
		}
	})
	t.Run("escalated background job runs under the granted mode and reports", func(t *testing.T) {
		reg, ch := newJobs(t)
		r := newEscalationRig(t, sandbox.ReadOnly, pipeline.AllowedOnce, reg)
		tool, ws := r.tool, r.ws
		got, err := run(t, tool, call(agent(t, "s", ws), cmd("touch bg", "run_in_background", true, "sandbox_permissions", "workspace-write", "justification", "why")))
		if err != nil || got != "started background job bash-1" {
			t.Fatalf("got %q, %v", got, err)
		}
		if n := wait(t, ch); !strings.HasSuffix(n.Text, "[status: completed, exit code: 0]. Read its output with job_output.") {
			t.Errorf("notice %q", n.Text)
		}
		if _, err := os.Stat(filepath.Join(ws, "bg")); err != nil {
			t.Error("granted background write missing")
		}
	})
}

func TestBackgroundDenialDetailCarriesSandboxNotes(t *testing.T) {
	sandboxtest.RequireBwrap(t)
	ws := t.TempDir()
	reg, ch := newJobs(t)
	tool := newTool(t, Config{}, Deps{Policy: fixedPolicy(sandbox.ReadOnly, ws), Confiner: provider(t, sandbox.Config{Chain: []string{"bwrap"}}), Jobs: reg})
	if _, err := run(t, tool, call(agent(t, "s", ws), cmd("touch x", "run_in_background", true))); err != nil {
		t.Fatal(err)
	}
	n := wait(t, ch)
	want := "background job bash-1 (bash: touch x) finished [status: completed, exit code: 1; " + sandbox.DenialMarker(sandbox.ReadOnly) + " " + hint() + "]. Read its output with job_output."
	if n.Text != want {
		t.Errorf("notice = %q\nwant     %q", n.Text, want)
	}
}

func TestRunnerFailures(t *testing.T) {
	ws := t.TempDir()
	dialect, _ := sandbox.DialectOf(sandbox.BackendLandlock)
	brokenRunner := filepath.Join(ws, "broken-runner")
	os.WriteFile(brokenRunner, []byte("#!/bin/sh\necho 'landlock-run: cannot open rule path: /x: Permission denied' >&2\nexit 125\n"), 0o755)
	wrap := func(runner string) constructed {
		return confinerFunc(func(_ context.Context, argv []string, p sandbox.Policy) (sandbox.ConfinedArgv, error) {
			return sandbox.ConfinedArgv{Argv: append([]string{runner, "--"}, argv...), Backend: sandbox.BackendLandlock, Enforcement: sandbox.Full,
				DenialSignatures: dialect.DenialSignatures, RunnerFailureRules: dialect.RunnerFailureRules, Policy: p}, nil
		})
	}
	t.Run("runner failing at exit fails the foreground call closed", func(t *testing.T) {
		tool := newTool(t, Config{}, Deps{Policy: fixedPolicy(sandbox.ReadOnly, ws), Confiner: wrap(brokenRunner)})
		_, err := run(t, tool, call(agent(t, "s", ws), cmd("echo never")))
		var ue *sandbox.UnavailableError
		if !pipeline.HasCode(err, sandbox.ErrorCode) || !errorsAs(err, &ue) || ue.Detail != "landlock-run: cannot open rule path: /x: Permission denied" {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("missing runner fails the foreground call closed", func(t *testing.T) {
		tool := newTool(t, Config{}, Deps{Policy: fixedPolicy(sandbox.ReadOnly, ws), Confiner: wrap("/nonexistent/landlock-run")})
		_, err := run(t, tool, call(agent(t, "s", ws), cmd("echo never")))
		var ue *sandbox.UnavailableError
		if !errorsAs(err, &ue) || ue.Detail != "Error: spawn /nonexistent/landlock-run ENOENT" {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("missing runner in background reports the runner marker", func(t *testing.T) {
		reg, ch := newJobs(t)
		tool := newTool(t, Config{}, Deps{Policy: fixedPolicy(sandbox.ReadOnly, ws), Confiner: wrap("/nonexistent/landlock-run"), Jobs: reg})
		ag := agent(t, "s", ws)
		if got, err := run(t, tool, call(ag, cmd("true", "run_in_background", true))); err != nil || got != "started background job bash-1" {
			t.Fatalf("got %q, %v", got, err)
		}
		wait(t, ch)
		out, err := jobTools(t, reg)[0].Run(context.Background(), pipeline.NewCall("c", "job_output", []byte(`{"job_id":"bash-1"}`), ag, nil))
		if err != nil {
			t.Fatal(err)
		}
		want := "[stderr]\nspawn failed: Error: spawn /nonexistent/landlock-run ENOENT\n" + sandbox.RunnerFailedMarker(sandbox.ReadOnly) + "\n[status: killed, killed before exit]"
		if got := out.Content[0].Text; got != want {
			t.Errorf("got  %q\nwant %q", got, want)
		}
	})
	t.Run("unusable backend refuses before running", func(t *testing.T) {
		marker := filepath.Join(ws, "ran")
		p := provider(t, sandbox.Config{Chain: []string{"landlock"}, LauncherPath: "/nonexistent/landlock-run"})
		tool := newTool(t, Config{}, Deps{Policy: fixedPolicy(sandbox.WorkspaceWrite, ws), Confiner: p})
		_, err := run(t, tool, call(agent(t, "s", ws), cmd("touch "+marker)))
		if !pipeline.HasCode(err, sandbox.ErrorCode) {
			t.Errorf("err = %v", err)
		}
		time.Sleep(50 * time.Millisecond)
		if _, err := os.Stat(marker); err == nil {
			t.Error("command ran without a sandbox")
		}
	})
}

func errorsAs(err error, target **sandbox.UnavailableError) bool {
	for e := err; e != nil; {
		if ue, ok := e.(*sandbox.UnavailableError); ok {
			*target = ue
			return true
		}
		u, ok := e.(interface{ Unwrap() error })
		if !ok {
			return false
		}
		e = u.Unwrap()
	}
	return false
}

// TestAdmittedGapsReachTheFacts: a chmod of an outside file the command
// owns goes through under Landlock (which cannot govern file modes) and is
// refused under bwrap; either way the model's text is upstream's (no
// marker) and so is the value (upstream's {mode, denied, enforcement}: a
// program may return it whole), and the facts beside it
// (pipeline.Output.Sandbox) name the backend that ran and, for Landlock,
// what it admits it cannot govern, chmod first.
func TestAdmittedGapsReachTheFacts(t *testing.T) {
	for _, backend := range []string{sandbox.BackendBwrap, sandbox.BackendLandlock} {
		t.Run(backend, func(t *testing.T) {
			cfg := sandbox.Config{Chain: []string{backend}}
			if backend == sandbox.BackendLandlock {
				sandboxtest.RequireLandlock(t, 1)
				cfg.LauncherPath = sandboxtest.Runner(t)
			} else {
				sandboxtest.RequireBwrap(t)
			}
			ws := sandboxtest.TempDir(t, "dshsim-bash-gap-ws-")
			outside := filepath.Join(sandboxtest.TempDir(t, "dshsim-bash-gap-out-"), "file")
			if err := os.WriteFile(outside, nil, 0o644); err != nil {
				t.Fatal(err)
			}
			tool := newTool(t, Config{}, Deps{Policy: fixedPolicy(sandbox.WorkspaceWrite, ws), Confiner: provider(t, cfg)})
			c := call(agent(t, "s", ws), cmd("chmod 0600 "+outside+" 2>/dev/null; echo $?"))
			if err := pipeline.CheckArgs(tool.definition(), c); err != nil {
				t.Fatal(err)
			}
			out, err := runTool(t, tool, context.Background(), c)
			if err != nil {
				t.Fatal(err)
			}
			var v struct{ Sandbox map[string]any }
			if err := json.Unmarshal(out.Value, &v); err != nil || len(v.Sandbox) != 3 || v.Sandbox["enforcement"] != "full" {
				t.Errorf("value %s (%v): want upstream's sandbox object {mode, denied, enforcement}", out.Value, err)
			}
			facts := sandbox.FactsOf(out.Sandbox)
			d, _ := sandbox.DialectOf(backend)
			if facts == nil || facts.Backend != backend || facts.Mode != sandbox.WorkspaceWrite || strings.Join(facts.Ungoverned, "|") != strings.Join(d.Ungoverned, "|") {
				t.Fatalf("facts %s, want backend %s and its ungoverned list %q", out.Sandbox, backend, d.Ungoverned)
			}
			st, _ := os.Stat(outside)
			wantText, wantMode := "1\n", os.FileMode(0o644) // bwrap's read-only bind refuses it
			if backend == sandbox.BackendLandlock {
				wantText, wantMode = "0\n", 0o600 // admitted: "chmod: file mode changes are not a Landlock right"
				if len(facts.Ungoverned) == 0 || !strings.HasPrefix(facts.Ungoverned[0], "chmod:") {
					t.Errorf("Landlock's facts do not admit chmod: %q", facts.Ungoverned)
				}
			}
			if out.Content[0].Text != wantText || st.Mode().Perm() != wantMode {
				t.Errorf("text %q, mode %v; want %q, %v", out.Content[0].Text, st.Mode().Perm(), wantText, wantMode)
			}
		})
	}
}
