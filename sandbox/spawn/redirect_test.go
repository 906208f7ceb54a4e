package spawn

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/dshsim/dshsim/sandbox"
	"github.com/dshsim/dshsim/sandbox/inproc"
)

// TestSwappedWorkspaceUnderTmpIsNotGranted: under Landlock, workspace-write
// grants the host /tmp, so a confined command whose workspace lives under /tmp
// can move the workspace away and put a symlink to anywhere at its path. The
// next call must not follow that link: the confiner refuses the root, nothing
// runs, and the directory the link points to stays untouched. The runner and
// the in-process path (which caches a ruleset per policy) both check the call
// with sandbox.Validate.
func TestSwappedWorkspaceUnderTmpIsNotGranted(t *testing.T) {
	for _, backend := range []string{sandbox.BackendLandlock, inproc.Backend} {
		t.Run(backend, func(t *testing.T) {
			p := confiner(t, backend)
			base, err := os.MkdirTemp("/tmp", "dshsim-swap-")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.RemoveAll(base) })
			ws := filepath.Join(base, "ws")
			if err := os.Mkdir(ws, 0o755); err != nil {
				t.Fatal(err)
			}
			outside := varTmpDir(t, "dshsim-swap-target-")
			pol := sandbox.Policy{Mode: sandbox.WorkspaceWrite, WorkspaceRoot: ws}

			// Call 1, really confined: /tmp is writable, so the swap succeeds.
			res, err := Run(context.Background(), Request{Argv: bash("mv " + ws + " " + ws + ".old && ln -s " + outside + " " + ws), Policy: pol, Confiner: p, Dir: base})
			if err != nil || res.ExitCode != 0 {
				t.Fatalf("call 1 (the swap) = %+v, %v; want it to succeed under Landlock's /tmp grant", res, err)
			}
			// Call 2: the workspace path now leads outside.
			res, err = Run(context.Background(), Request{Argv: bash("echo escaped > " + ws + "/via-link"), Policy: pol, Confiner: p, Dir: base})
			if !errors.Is(err, sandbox.ErrBadInput) {
				t.Fatalf("call 2 = %+v, %v; want a refusal wrapping sandbox.ErrBadInput", res, err)
			}
			if _, err := os.Stat(filepath.Join(outside, "via-link")); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("the write through the swapped workspace landed outside (stat: %v)", err)
			}
		})
	}
}

func TestRedirectingSymlink(t *testing.T) {
	area, err := os.MkdirTemp("/tmp", "dshsim-area-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(area) })
	elsewhere := varTmpDir(t, "dshsim-elsewhere-")
	os.Mkdir(filepath.Join(area, "real"), 0o755)
	os.Symlink(elsewhere, filepath.Join(area, "link"))
	os.Symlink(filepath.Join(elsewhere), filepath.Join(elsewhere, "self")) // a symlink outside every area
	areas := []string{area}
	for _, tc := range []struct {
		name     string
		path     string
		wantLink string
	}{
		{name: "a real directory inside the area is not redirectable", path: filepath.Join(area, "real")},
		{name: "a symlink inside the area is", path: filepath.Join(area, "link"), wantLink: filepath.Join(area, "link")},
		{name: "a path below a symlink inside the area is", path: filepath.Join(area, "link", "sub"), wantLink: filepath.Join(area, "link")},
		{name: "a symlink outside every area is not", path: filepath.Join(elsewhere, "self")},
		{name: "the area itself is not", path: area},
	} {
		t.Run(tc.name, func(t *testing.T) {
			link, ok := sandbox.RedirectingSymlink(tc.path, areas)
			if link != tc.wantLink || ok != (tc.wantLink != "") {
				t.Errorf("RedirectingSymlink(%s) = %q, %v; want %q", tc.path, link, ok, tc.wantLink)
			}
		})
	}
}
