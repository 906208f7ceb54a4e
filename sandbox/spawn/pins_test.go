package spawn

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshsim/dshsim/sandbox"
	"github.com/dshsim/dshsim/sandbox/chain/chaintest"
	"github.com/dshsim/dshsim/sandbox/inproc"
	"github.com/dshsim/dshsim/sandbox/sandboxtest"
)

// seedRepo makes ws a small repository: a file and .git with a config and
// a hooks directory.
func seedRepo(t *testing.T, ws string) {
	t.Helper()
	for p, c := range map[string]string{"file.txt": "x\n", ".git/config": "[core]\n", ".git/hooks/README": "hooks\n"} {
		p = filepath.Join(ws, p)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestRecursiveDeleteOfTheWorkspace pins what `rm -rf "$WS"` does under
// workspace-write on each backend (upstream's #149: it needs no
// confirmation, and nothing stops it): everything beneath the workspace
// goes, .git included; under Landlock with the workspace in /tmp (a
// granted temp area) the directory itself goes too; elsewhere the
// directory stays, empty (Landlock: removing it is a right of its parent,
// which is not granted; bwrap: it is a mount point). A change to either is
// a change of what the sandbox promises, and must show here.
func TestRecursiveDeleteOfTheWorkspace(t *testing.T) {
	tests := []struct {
		backend     string
		inTmp       bool
		removed     bool // the workspace directory itself is gone
		commandExit int
	}{
		{sandbox.BackendBwrap, false, false, 1},
		{sandbox.BackendBwrap, true, false, 1},
		{sandbox.BackendLandlock, false, false, 1},
		{sandbox.BackendLandlock, true, true, 0},
		{inproc.Backend, false, false, 1},
		{inproc.Backend, true, true, 0},
	}
	for _, tc := range tests {
		where := "/var/tmp"
		if tc.inTmp {
			where = "/tmp"
		}
		t.Run(tc.backend+" in "+where, func(t *testing.T) {
			c := confiner(t, tc.backend)
			parent := varTmpDir(t, "dshsim-rmrf-")
			if tc.inTmp {
				var err error
				if parent, err = os.MkdirTemp("/tmp", "dshsim-rmrf-"); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { os.RemoveAll(parent) })
			}
			ws := filepath.Join(parent, "ws")
			seedRepo(t, ws)
			res, err := Run(context.Background(), Request{Argv: bash(`rm -rf "$WS"`), Env: []string{"PATH=/usr/bin:/bin", "WS=" + ws},
				Policy: sandbox.Policy{Mode: sandbox.WorkspaceWrite, WorkspaceRoot: ws}, Confiner: c})
			if err != nil {
				t.Fatal(err)
			}
			_, statErr := os.Stat(ws)
			removed := errors.Is(statErr, os.ErrNotExist)
			var left []string
			if !removed {
				ents, _ := os.ReadDir(ws)
				for _, e := range ents {
					left = append(left, e.Name())
				}
			}
			if removed != tc.removed || len(left) != 0 || res.ExitCode != tc.commandExit {
				t.Errorf("workspace removed %v (want %v), left %q (want nothing: .git goes too), exit %d (want %d); stderr %q",
					removed, tc.removed, left, res.ExitCode, tc.commandExit, res.Stderr.Text)
			}
		})
	}
}

// TestOutsideReadsSucceed pins that only writes are restricted (upstream's
// #492): a file outside the workspace reads under every backend in both
// confined modes.
func TestOutsideReadsSucceed(t *testing.T) {
	outside := filepath.Join(varTmpDir(t, "dshsim-read-"), "note")
	if err := os.WriteFile(outside, []byte("readable\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, backend := range []string{sandbox.BackendBwrap, sandbox.BackendLandlock, inproc.Backend} {
		for _, mode := range []sandbox.Mode{sandbox.ReadOnly, sandbox.WorkspaceWrite} {
			t.Run(backend+"/"+string(mode), func(t *testing.T) {
				ws := varTmpDir(t, "dshsim-ws-")
				res, err := Run(context.Background(), Request{Argv: bash("cat " + outside), Policy: sandbox.Policy{Mode: mode, WorkspaceRoot: ws}, Confiner: confiner(t, backend)})
				if err != nil || res.ExitCode != 0 || res.Stdout.Text != "readable\n" || res.Sandbox.Denied {
					t.Errorf("cat outside = %+v, %v; want it read", res, err)
				}
			})
		}
	}
}

// TestHardenedGitDirIsReadOnly: with the opt-in hardening, a workspace-write
// call under bwrap may write the workspace but not its .git (hooks and
// config that the next git command runs unconfined), and holds no
// descriptor of either (bwrap binds them from descriptors and closes
// them); under Landlock it can,
// and the report admits it (Ungoverned "git-dir"), the in-process path's
// as the runner's.
func TestHardenedGitDirIsReadOnly(t *testing.T) {
	sandboxtest.RequireLandlock(t, 6)
	for _, backend := range []string{sandbox.BackendBwrap, sandbox.BackendLandlock, inproc.Backend} {
		t.Run(backend, func(t *testing.T) {
			var c Confiner
			if backend == inproc.Backend {
				c = chaintest.Landlock(t, sandbox.Config{Harden: true})
			} else {
				if backend == sandbox.BackendBwrap {
					sandboxtest.RequireBwrap(t)
				}
				p, err := sandbox.NewProvider(sandbox.Config{Platform: "linux", Chain: []string{backend}, LauncherPath: sandboxtest.Runner(t), Harden: true})
				if err != nil {
					t.Fatal(err)
				}
				c = p
			}
			ws := varTmpDir(t, "dshsim-git-")
			seedRepo(t, ws)
			res, err := Run(context.Background(), Request{Argv: bash("ls /proc/$$/fd; echo y > file.txt; echo '#!/bin/sh' > .git/hooks/pre-commit; echo '[x]' >> .git/config"),
				Policy: sandbox.Policy{Mode: sandbox.WorkspaceWrite, WorkspaceRoot: ws}, Confiner: c})
			if err != nil {
				t.Fatal(err)
			}
			file, _ := os.ReadFile(filepath.Join(ws, "file.txt"))
			_, hookErr := os.Stat(filepath.Join(ws, ".git/hooks/pre-commit"))
			config, _ := os.ReadFile(filepath.Join(ws, ".git/config"))
			gitWritten := hookErr == nil || string(config) != "[core]\n"
			admitted := strings.Contains(strings.Join(res.Sandbox.Ungoverned, "\n"), sandbox.IsolatedGitDir+": ")
			if string(file) != "y\n" {
				t.Errorf("the workspace write did not land: file.txt = %q", file)
			}
			if backend == sandbox.BackendBwrap {
				if gitWritten || admitted || !res.Sandbox.Denied {
					t.Errorf("bwrap: .git written %v (want false), admitted %v, denied %v; stderr %q", gitWritten, admitted, res.Sandbox.Denied, res.Stderr.Text)
				}
				// bwrap closes the descriptors it bound: one of .git would
				// reach its files on the host's writable mount.
				if res.Stdout.Text != "0\n1\n2\n" {
					t.Errorf("bwrap: the command holds descriptors %q, want 0 1 2 only", res.Stdout.Text)
				}
				return
			}
			if !gitWritten || !admitted {
				t.Errorf("%s: .git written %v, admitted %v (%q): Landlock cannot keep it read-only and must say so", backend, gitWritten, admitted, res.Sandbox.Ungoverned)
			}
		})
	}
}
