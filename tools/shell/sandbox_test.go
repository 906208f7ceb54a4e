package shell

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/dshsim/dshsim/pipeline"
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

// TestTheShellIsConfinedLikeBash runs the shell as an attacker would use
// it, under each backend the stack uses: a write outside the workspace
// and any write under read-only fail on the host, the shell's state does
// not carry over a mode switch (the shell restarts under the new mode),
// and a confined mode without a confiner runs nothing.
func TestTheShellIsConfinedLikeBash(t *testing.T) {
	for _, b := range []struct {
		name     string
		confiner func(t *testing.T) spawn.Confiner
	}{
		{"landlock in-process", func(t *testing.T) spawn.Confiner { return chaintest.Landlock(t, sandbox.Config{}) }},
		{"landlock runner", func(t *testing.T) spawn.Confiner { return sandboxtest.Provider(t, sandbox.BackendLandlock) }},
		{"bwrap", func(t *testing.T) spawn.Confiner { return sandboxtest.Provider(t, sandbox.BackendBwrap) }},
	} {
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
