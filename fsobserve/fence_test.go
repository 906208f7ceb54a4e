package fsobserve

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/dshsim/dshsim/sandbox"
	"github.com/dshsim/dshsim/sandbox/sandboxtest"
)

func TestFence(t *testing.T) {
	// Both under /var/tmp, not /tmp (which workspace-write allows, so a
	// sibling of the workspace there would prove nothing) and not beside the
	// package (the checkout may live under /tmp, a CI clone).
	ws, err := filepath.EvalSymlinks(sandboxtest.TempDir(t, "dshsim-fence-ws-"))
	if err != nil {
		t.Fatal(err)
	}
	outside := sandboxtest.TempDir(t, "dshsim-fence-outside-")
	os.Symlink(outside, filepath.Join(ws, "escape"))
	l := newLocal(t, ws)
	// A sibling whose name starts with the workspace's: containment is by
	// path components, not by string prefix.
	evil := ws + "-evil"
	if err := os.Mkdir(evil, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(evil) })
	home := sandboxtest.TempDir(t, "dshsim-fence-home-")
	t.Setenv("HOME", home)
	cases := []struct {
		name   string
		mode   sandbox.Mode
		path   string
		denied bool
		ws     string // the workspace root; "" = ws
	}{
		{"danger-full-access is unfenced", sandbox.DangerFullAccess, filepath.Join(outside, "f"), false, ""},
		{"read-only denies a write inside the workspace", sandbox.ReadOnly, filepath.Join(ws, "f"), true, ""},
		{"workspace-write allows the workspace", sandbox.WorkspaceWrite, filepath.Join(ws, "a/b/f"), false, ""},
		{"workspace-write allows /tmp", sandbox.WorkspaceWrite, "/tmp/dshsim-fence-probe", false, ""},
		{"workspace-write denies outside", sandbox.WorkspaceWrite, filepath.Join(outside, "f"), true, ""},
		{"workspace-write denies a sibling sharing the root's name as prefix", sandbox.WorkspaceWrite, filepath.Join(evil, "f"), true, ""},
		{"workspace-write grants nothing beneath a root of /", sandbox.WorkspaceWrite, filepath.Join(outside, "f"), true, "/"},
		{"workspace-write grants nothing beneath the home directory as root", sandbox.WorkspaceWrite, filepath.Join(home, "f"), true, home},
		{"workspace-write still grants /tmp beside a refused root", sandbox.WorkspaceWrite, "/tmp/dshsim-fence-probe", false, "/"},
		{"workspace-write denies a symlink escaping the workspace", sandbox.WorkspaceWrite, filepath.Join(ws, "escape/f"), true, ""},
		{"an unknown mode fails closed", sandbox.Mode("bogus"), filepath.Join(ws, "f"), true, ""},
	}
	rootOf := func(c string) string {
		if c == "" {
			return ws
		}
		return c
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := l.Fence(resolve(t, l, c.path), sandbox.Policy{Mode: c.mode, WorkspaceRoot: rootOf(c.ws)})
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
