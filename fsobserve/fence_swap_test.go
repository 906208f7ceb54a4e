package fsobserve

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshsim/dshsim/harness"
	"github.com/dshsim/dshsim/sandbox"
	"github.com/dshsim/dshsim/sandbox/sandboxtest"
)

// TestFenceDistrustsAWorkspaceRootSwappedForASymlink: a workspace under /tmp
// (or under the OS temp directory) sits inside another writable root, so a
// command confined to workspace-write (Landlock grants the host /tmp) can
// move the workspace away and put a symlink to anywhere at its path. The
// fence re-resolves the root on every call: it must not follow that symlink
// and take its target as a writable root.
func TestFenceDistrustsAWorkspaceRootSwappedForASymlink(t *testing.T) {
	ws, err := os.MkdirTemp("/tmp", "dshsim-fence-ws-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(ws); os.RemoveAll(ws + ".moved") })
	outside := sandboxtest.TempDir(t, "dshsim-fence-outside-")
	victim := filepath.Join(outside, "victim.txt")
	harness.MustWrite(t, victim, "precious\n")

	// What a confined command may do: everything happens inside /tmp.
	out, err := exec.Command("/bin/sh", "-c", `mv "$1" "$1.moved" && ln -s "$2" "$1"`, "sh", ws, outside).CombinedOutput()
	if err != nil {
		t.Fatalf("swap: %v\n%s", err, out)
	}

	l := newLocal(t, "/")
	pol := sandbox.Policy{Mode: sandbox.WorkspaceWrite, WorkspaceRoot: ws}
	for _, p := range []string{victim, filepath.Join(ws, "victim.txt")} {
		t.Run(strings.TrimPrefix(p, "/"), func(t *testing.T) {
			err := l.Fence(resolve(t, l, p), pol)
			wantCode(t, err, CodeSandboxDenied, sandbox.DenialMarker(sandbox.WorkspaceWrite))
		})
	}
	// The other roots keep working.
	if err := l.Fence(resolve(t, l, "/tmp/dshsim-fence-probe"), pol); err != nil {
		t.Errorf("/tmp denied after the swap: %v", err)
	}
}
