package shell

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/pipeline/session"
	"github.com/dshsim/dshsim/sandbox"
	"github.com/dshsim/dshsim/sandbox/chain/chaintest"
	"github.com/dshsim/dshsim/sandbox/sandboxtest"
	"github.com/dshsim/dshsim/sandbox/spawn"
)

func TestMain(m *testing.M) { os.Exit(sandboxtest.Main(m)) }

// modeSwitch is a policy resolver whose mode a test switches.
type modeSwitch struct {
	mu   sync.Mutex
	mode sandbox.Mode
	ws   string
}

func (m *modeSwitch) set(mode sandbox.Mode) { m.mu.Lock(); m.mode = mode; m.mu.Unlock() }

func (m *modeSwitch) policy(call *pipeline.Call) (sandbox.Policy, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return sandbox.Policy{Mode: m.mode, WorkspaceRoot: m.ws, SessionID: call.SessionID()}, nil
}

// backends are the confiners the stack uses, each real.
var backends = []struct {
	name     string
	confiner func(t *testing.T) spawn.Confiner
}{
	{"landlock in-process", func(t *testing.T) spawn.Confiner { return chaintest.Landlock(t, sandbox.Config{}) }},
	{"landlock runner", func(t *testing.T) spawn.Confiner { return sandboxtest.Provider(t, sandbox.BackendLandlock) }},
	{"bwrap", func(t *testing.T) spawn.Confiner { return sandboxtest.Provider(t, sandbox.BackendBwrap) }},
}

// TestTheShellIsConfinedLikeBash runs the shell as an attacker would use
// it, under each backend the stack uses: a write outside the workspace
// and any write under read-only fail on the host, the shell's state does
// not carry over a policy switch the mode fence does not hold (the
// resolver's own, as a call's approval is: the shell restarts under the
// new policy), and a confined mode without a confiner runs nothing.
func TestTheShellIsConfinedLikeBash(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			confiner := b.confiner(t)
			outside := filepath.Join(t.TempDir(), "outside")
			sw := &modeSwitch{mode: sandbox.WorkspaceWrite}
			r := newRig(t, Config{Confiner: confiner})
			sw.ws = r.ws
			r.tool = mustNew(t, Config{Confiner: confiner, Policy: sw.policy})
			steps := []struct {
				mode       sandbox.Mode
				cmd        string
				want       string // "" : the command failed ([exit code: 1] last)
				wantInside bool
			}{
				{sandbox.WorkspaceWrite, "export STATE=kept; echo hi > inside && cat inside", "hi", true},
				{sandbox.WorkspaceWrite, "touch " + outside, "", false},
				{sandbox.WorkspaceWrite, "echo $STATE", "kept", false},
				{sandbox.ReadOnly, "echo ${STATE:-restarted}", "restarted", false},
				{sandbox.ReadOnly, "touch inside2", "", false},
			}
			for i, s := range steps {
				sw.set(s.mode)
				got, err := r.run(context.Background(), s.cmd)
				switch {
				case err != nil:
					t.Fatalf("step %d %q: %v", i+1, s.cmd, err)
				case s.want == "" && !strings.HasSuffix(got, "[exit code: 1]"):
					t.Errorf("step %d %q was not refused: %q", i+1, s.cmd, got)
				case s.want != "" && got != s.want:
					t.Errorf("step %d %q = %q, want %q", i+1, s.cmd, got, s.want)
				}
			}
			if _, err := os.Stat(outside); err == nil {
				t.Error("the shell wrote outside the workspace")
			}
			if _, err := os.Stat(filepath.Join(r.ws, "inside2")); err == nil {
				t.Error("the shell wrote under read-only")
			}
			if _, err := os.Stat(filepath.Join(r.ws, "inside")); err != nil {
				t.Errorf("the allowed write is missing: %v", err)
			}
		})
	}
	t.Run("a confined mode without a confiner fails closed", func(t *testing.T) {
		r := newRig(t, Config{})
		r.tool = mustNew(t, Config{Policy: (&modeSwitch{mode: sandbox.ReadOnly, ws: r.ws}).policy})
		_, err := r.run(context.Background(), "touch inside")
		var ue *sandbox.UnavailableError
		if !errorsAs(err, &ue) {
			t.Errorf("got %v, want a sandbox-unavailable error", err)
		}
		if _, err := os.Stat(filepath.Join(r.ws, "inside")); err == nil {
			t.Error("the command ran unconfined")
		}
	})
}

// logMode is a policy resolver as the stack's: the mode is the session
// log's last sandbox/mode (workspace-write without one).
func logMode(ws string) func(*pipeline.Call) (sandbox.Policy, error) {
	return func(call *pipeline.Call) (sandbox.Policy, error) {
		events, err := call.Agent().Session.Events()
		if err != nil {
			return sandbox.Policy{}, err
		}
		mode := sandbox.WorkspaceWrite
		if m, ok := session.LastField(events, session.KindSandboxMode, "mode"); ok {
			mode = sandbox.Mode(m)
		}
		return sandbox.Policy{Mode: mode, WorkspaceRoot: ws, SessionID: call.SessionID()}, nil
	}
}

// TestAModeChangeIsRefusedWhileTheShellIsOpen is upstream's sandbox-mode
// fence, under each backend: while the agent's shell is open a
// sandbox/mode event that changes the mode is refused with upstream's
// text and the log does not change, so the shell keeps its state and its
// confinement (still the mode in force); one that states the mode in
// force passes; once the shell is gone the change is logged and the next
// shell is confined by it.
func TestAModeChangeIsRefusedWhileTheShellIsOpen(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			confiner := b.confiner(t)
			outside := filepath.Join(t.TempDir(), "outside")
			r := newRig(t, Config{})
			r.tool = mustNew(t, Config{Confiner: confiner, Policy: logMode(r.ws)})
			log := r.agent.Session
			if got, err := r.run(context.Background(), "export STATE=kept; mkdir sub && cd sub && echo $PWD"); err != nil || got != "<ws>/sub" {
				t.Fatalf("first call: %q, %v", got, err)
			}
			const refusal = `cannot change sandbox mode from "workspace-write" to "read-only" while persistent terminal sessions are open or being created; wait for creation to settle and close them first`
			if _, err := log.Append(session.KindSandboxMode, map[string]string{"mode": "read-only"}); err == nil || err.Error() != refusal {
				t.Fatalf("mode change with the shell open: %v, want %q", err, refusal)
			}
			if _, err := log.Append(session.KindSandboxMode, map[string]string{"mode": "workspace-write"}); err != nil {
				t.Fatalf("the mode in force stated again: %v", err)
			}
			if events, _ := log.Events(); len(events) != 1 {
				t.Fatalf("the log holds %d events, want the one unchanged mode", len(events))
			}
			for _, s := range []struct{ cmd, want string }{
				{"echo $STATE $PWD; echo hi > in && cat in", "kept <ws>/sub\nhi"},
				{"touch " + outside, "[exit code: 1]"},
				{"exit 0", "exit\n[shell exited: code 0]\n" + ResetMessage},
			} {
				got, err := r.run(context.Background(), s.cmd)
				if err != nil || (got != s.want && !strings.HasSuffix(got, s.want)) {
					t.Errorf("%s: %q, %v; want %q", s.cmd, got, err, s.want)
				}
			}
			if _, err := log.Append(session.KindSandboxMode, map[string]string{"mode": "read-only"}); err != nil {
				t.Fatalf("mode change with no shell open: %v", err)
			}
			if got, err := r.run(context.Background(), "echo ${STATE:-fresh}; touch in2"); err != nil || !strings.HasPrefix(got, "fresh\n") || !strings.HasSuffix(got, "[exit code: 1]") {
				t.Errorf("after the change: %q, %v", got, err)
			}
			if _, err := os.Stat(outside); err == nil {
				t.Error("the shell wrote outside the workspace")
			}
			if _, err := os.Stat(filepath.Join(r.ws, "in2")); err == nil {
				t.Error("the shell wrote under read-only")
			}
			if _, err := os.Stat(filepath.Join(r.ws, "sub", "in")); err != nil {
				t.Errorf("the write under workspace-write is missing: %v", err)
			}
		})
	}
}

// TestAWaitForInputAnswersTheOutputSoFar is upstream's settle on a wait
// for terminal input, unconfined and under each backend: a command whose
// foreground process waits to read the terminal answers what it printed
// so far at once (not at the timeout), the shell and the waiting process
// are kept, the next call's line is what that process reads, and the
// shell's state is still there after it.
func TestAWaitForInputAnswersTheOutputSoFar(t *testing.T) {
	run := func(t *testing.T, cfg Config) {
		r := newRig(t, Config{})
		cfg.TimeoutMs = 15000
		r.tool = mustNew(t, cfg)
		began := time.Now()
		got, err := r.run(context.Background(), "export KEPT=1; printf 'name? '; head -n 1 > answer; echo done")
		if err != nil || got != "name? " {
			t.Fatalf("waiting command: %q, %v; want the output so far", got, err)
		}
		if d := time.Since(began); d > 10*time.Second {
			t.Errorf("the wait for input was answered after %s", d)
		}
		if got, err := r.run(context.Background(), "echo typed"); err != nil || strings.Contains(got, "timed out") {
			t.Fatalf("the answer: %q, %v", got, err)
		}
		if got, err := r.run(context.Background(), "echo $KEPT; cat answer"); err != nil || !strings.HasPrefix(got, "1\n") || !strings.Contains(got, "echo typed") {
			t.Errorf("after the answer: %q, %v; want the kept state and the line head read", got, err)
		}
	}
	t.Run("unconfined", func(t *testing.T) { run(t, Config{}) })
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			ws := ""
			run(t, Config{Confiner: b.confiner(t), Policy: func(call *pipeline.Call) (sandbox.Policy, error) {
				if ws == "" {
					ws = call.Agent().Session.Header().Cwd
				}
				return sandbox.Policy{Mode: sandbox.WorkspaceWrite, WorkspaceRoot: ws, SessionID: call.SessionID()}, nil
			}})
		})
	}
}
