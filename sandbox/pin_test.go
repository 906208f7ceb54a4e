//go:build linux

package sandbox

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// bwrapProvider is a provider whose chain selects bwrap without running
// it (an injected probe), hardened or not: Confine's argv and files are
// pure of bwrap's presence.
func bwrapProvider(t *testing.T, harden bool) *Provider {
	t.Helper()
	p, err := NewProvider(Config{Platform: "linux", Chain: []string{BackendBwrap, BackendLandlock}, LauncherPath: "/l/landlock-run", Harden: harden,
		Probes: Probes{Bwrap: func(context.Context) bool { return true }}})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// fileIDOf is the device and inode of what f holds open.
func fileIDOf(t *testing.T, f *os.File) FileID {
	t.Helper()
	var st syscall.Stat_t
	if err := syscall.Fstat(int(f.Fd()), &st); err != nil {
		t.Fatal(err)
	}
	return FileID{Dev: uint64(st.Dev), Ino: st.Ino}
}

// TestBwrapBindsTheCheckedDescriptors: under workspace-write bwrap's argv
// binds the workspace root through descriptor 4, and Files[0] is the
// directory the check identified (Policy.WorkspaceID); hardened, the .git
// opened beneath it is Files[1], bound read-only through 5, and is not
// there when the workspace has none; read-only binds nothing by
// descriptor. Fails if the root is bound by path or a file is another
// directory than the one checked.
func TestBwrapBindsTheCheckedDescriptors(t *testing.T) {
	ws := varTmpBase(t, "dshsim-pin-")
	argv := []string{"true"}
	ww := Policy{Mode: WorkspaceWrite, WorkspaceRoot: ws}
	got, err := bwrapProvider(t, false).Confine(context.Background(), argv, ww)
	if err != nil {
		t.Fatal(err)
	}
	defer got.Close()
	if want := Wrap([]string{"bwrap"}, BwrapArgs(got.Policy), argv); !slices.Equal(got.Argv, want) || !strings.Contains(strings.Join(got.Argv, " "), "--bind-fd 4 "+ws+" ") {
		t.Errorf("argv %q, want %q", got.Argv, want)
	}
	if len(got.Files) != 1 || got.Policy.WorkspaceID == (FileID{}) || fileIDOf(t, got.Files[0]) != got.Policy.WorkspaceID {
		t.Fatalf("files %v: want the one directory the check identified (%v)", got.Files, got.Policy.WorkspaceID)
	}
	ro, err := bwrapProvider(t, false).Confine(context.Background(), argv, Policy{Mode: ReadOnly, WorkspaceRoot: ws})
	if err != nil || len(ro.Files) != 0 || strings.Contains(strings.Join(ro.Argv, " "), "-fd") {
		t.Errorf("read-only: %q, files %v, %v; want nothing bound by descriptor", ro.Argv, ro.Files, err)
	}

	hardened := bwrapProvider(t, true)
	noGit, err := hardened.Confine(context.Background(), argv, ww)
	if err != nil || len(noGit.Files) != 1 || strings.Contains(strings.Join(noGit.Argv, " "), ".git") {
		t.Errorf("hardened without .git: %q, files %v, %v; want only the root bound", noGit.Argv, noGit.Files, err)
	}
	noGit.Close()
	if err := os.Mkdir(filepath.Join(ws, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	git, err := hardened.Confine(context.Background(), argv, ww)
	if err != nil {
		t.Fatal(err)
	}
	defer git.Close()
	st, _ := os.Stat(filepath.Join(ws, ".git"))
	gitID := FileID{Dev: uint64(st.Sys().(*syscall.Stat_t).Dev), Ino: st.Sys().(*syscall.Stat_t).Ino}
	if len(git.Files) != 2 || fileIDOf(t, git.Files[1]) != gitID || !strings.Contains(strings.Join(git.Argv, " "), "--bind-fd 4 "+ws+" --ro-bind-fd 5 "+ws+"/.git ") {
		t.Errorf("hardened with .git: %q, files %v; want the root through 4 and .git read-only through 5", git.Argv, git.Files)
	}
}

// TestHardenedBwrapRefusesALinkedGitDir: a workspace whose .git is a
// symbolic link is refused under hardened bwrap (the .git is opened
// without following a link, and nothing is bound by path instead), with
// an error that names it; the root's descriptor is not kept.
func TestHardenedBwrapRefusesALinkedGitDir(t *testing.T) {
	ws := varTmpBase(t, "dshsim-pin-")
	if err := os.Symlink(t.TempDir(), filepath.Join(ws, ".git")); err != nil {
		t.Fatal(err)
	}
	got, err := bwrapProvider(t, true).Confine(context.Background(), []string{"true"}, Policy{Mode: WorkspaceWrite, WorkspaceRoot: ws})
	if !errors.Is(err, ErrBadInput) || !strings.Contains(err.Error(), ws+"/.git is a symbolic link") || got.Files != nil || got.Argv != nil {
		t.Errorf("Confine = %q, %v; want a refusal naming the link", got.Argv, err)
	}
}

// TestInheritNumbersAfterTheCallersFiles: a start that passes descriptors
// of its own (3, 4, ...) gets the confinement's after them and one closed
// number; without any, Argv's own numbers (4, 5) with 3 closed. Argv and
// the caller's list are left as they were.
func TestInheritNumbersAfterTheCallersFiles(t *testing.T) {
	ws := varTmpBase(t, "dshsim-pin-")
	if err := os.Mkdir(filepath.Join(ws, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	c, err := bwrapProvider(t, true).Confine(context.Background(), []string{"true"}, Policy{Mode: WorkspaceWrite, WorkspaceRoot: ws})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	before := slices.Clone(c.Argv)
	a, b := os.Stdin, os.Stdout
	for _, tc := range []struct {
		extra     []*os.File
		root, git string
	}{{nil, "4", "5"}, {[]*os.File{a}, "5", "6"}, {[]*os.File{a, b}, "6", "7"}} {
		argv, files := c.Inherit(tc.extra)
		want := append(append(slices.Clone(tc.extra), nil), c.Files...)
		line := strings.Join(argv, " ")
		if !strings.Contains(line, "--bind-fd "+tc.root+" "+ws+" --ro-bind-fd "+tc.git+" "+ws+"/.git ") || !slices.Equal(files, want) {
			t.Errorf("Inherit(%d files) = %q, %v; want the root as %s and .git as %s after %v", len(tc.extra), argv, files, tc.root, tc.git, want)
		}
	}
	if !slices.Equal(c.Argv, before) {
		t.Errorf("Inherit changed Argv: %q, was %q", c.Argv, before)
	}
	if argv, files := (ConfinedArgv{Argv: []string{"r", "--", "x"}}).Inherit([]*os.File{a}); !slices.Equal(argv, []string{"r", "--", "x"}) || !slices.Equal(files, []*os.File{a}) {
		t.Errorf("without files: %q, %v; want argv and the caller's files as they are", argv, files)
	}
	if err := c.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if err := c.Close(); err != nil {
		t.Errorf("a second Close: %v", err)
	}
}
