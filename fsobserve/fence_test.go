package fsobserve

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/dshsim/dshsim/sandbox"
	"github.com/dshsim/dshsim/sandbox/sandboxtest"
)

func TestFence(t *testing.T) {
	ws := realTemp(t)
	// Under /var/tmp, not beside the package: the checkout may live under
	// /tmp (a CI clone), which workspace-write allows.
	outside := sandboxtest.TempDir(t, "dshsim-fence-outside-")
	os.Symlink(outside, filepath.Join(ws, "escape"))
	l := newLocal(t, ws)
	cases := []struct {
		name   string
		mode   sandbox.Mode
		path   string
		denied bool
	}{
		{"danger-full-access is unfenced", sandbox.DangerFullAccess, filepath.Join(outside, "f"), false},
		{"read-only denies a write inside the workspace", sandbox.ReadOnly, filepath.Join(ws, "f"), true},
		{"workspace-write allows the workspace", sandbox.WorkspaceWrite, filepath.Join(ws, "a/b/f"), false},
		{"workspace-write allows /tmp", sandbox.WorkspaceWrite, "/tmp/dshsim-fence-probe", false},
		{"workspace-write denies outside", sandbox.WorkspaceWrite, filepath.Join(outside, "f"), true},
		{"workspace-write denies a symlink escaping the workspace", sandbox.WorkspaceWrite, filepath.Join(ws, "escape/f"), true},
		{"an unknown mode fails closed", sandbox.Mode("bogus"), filepath.Join(ws, "f"), true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := l.Fence(resolve(t, l, c.path), sandbox.Policy{Mode: c.mode, WorkspaceRoot: ws})
			if !c.denied {
				if err != nil {
					t.Fatalf("denied: %v", err)
				}
				return
			}
			wantCode(t, err, CodeSandboxDenied, sandbox.DenialMarker(c.mode))
		})
	}
}
