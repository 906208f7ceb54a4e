package inproc

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/dshsim/dshsim/internal/waittest"
	"github.com/dshsim/dshsim/sandbox"
)

// readOnlyPolicies are n read-only policies on workspaces of their own.
func readOnlyPolicies(t *testing.T, n int) []sandbox.Policy {
	t.Helper()
	out := make([]sandbox.Policy, n)
	for i := range out {
		root, err := filepath.EvalSymlinks(varTmpDir(t, "dshsim-lru-"))
		if err != nil {
			t.Fatal(err)
		}
		out[i] = sandbox.Policy{Mode: sandbox.ReadOnly, WorkspaceRoot: root}
	}
	return out
}

// run starts /bin/true under p and waits for it.
func run(t *testing.T, l *Launcher, p sandbox.Policy) {
	t.Helper()
	cmd := exec.Command("true")
	if err := l.Start(cmd, p); err != nil {
		t.Fatal(err)
	}
	if err := waittest.Exit(t, cmd, "the confined command"); err != nil {
		t.Fatal(err)
	}
}

// kept reports whether the launcher keeps a worker for p's workspace.
func kept(l *Launcher, p sandbox.Policy) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for k := range l.workers {
		if k.root == p.WorkspaceRoot {
			return true
		}
	}
	return false
}

// TestEvictionIsLeastRecentlyUsed: with maxWorkers policies kept, a start
// of the first one makes it the most recent, so the next new policy evicts
// the second, not the first. A launcher that did not refresh a worker's
// recency on use would evict the first here.
func TestEvictionIsLeastRecentlyUsed(t *testing.T) {
	l := testLauncher(t)
	ps := readOnlyPolicies(t, maxWorkers+1)
	for _, p := range ps[:maxWorkers] {
		run(t, l, p)
	}
	run(t, l, ps[0]) // the first is now the most recently used
	run(t, l, ps[maxWorkers])
	if !kept(l, ps[0]) || kept(l, ps[1]) {
		t.Errorf("after using the first policy again: first kept %v, second kept %v; want the second (least recently used) evicted", kept(l, ps[0]), kept(l, ps[1]))
	}
}

// TestBusyWorkerIsNeverEvicted: a worker whose start is in flight stays
// when more than maxWorkers policies are made meanwhile, and its start
// completes; a launcher that evicted it would close the channel its next
// start sends on.
func TestBusyWorkerIsNeverEvicted(t *testing.T) {
	l := testLauncher(t)
	ps := readOnlyPolicies(t, maxWorkers+1)
	entered, release := make(chan struct{}), make(chan struct{})
	var first atomic.Bool
	l.onThread = func() {
		if first.CompareAndSwap(false, true) {
			close(entered)
			<-release
		}
	}
	busy := make(chan error, 1)
	go func() {
		cmd := exec.Command("true")
		err := l.Start(cmd, ps[0])
		if err == nil {
			err = cmd.Wait()
		}
		busy <- err
	}()
	waittest.Closed(t, entered, "the first start to reach its thread")
	for _, p := range ps[1:] {
		run(t, l, p)
	}
	stillKept := kept(l, ps[0])
	close(release)
	if err := waittest.Recv(t, busy, "the busy start"); err != nil {
		t.Errorf("the busy start: %v", err)
	}
	if !stillKept {
		t.Errorf("the worker with a start in flight was evicted")
	}
	run(t, l, ps[0])
}

// TestThreadKeyHoldsTheWorkspaceIdentity: a workspace renamed away and made
// again under its name is another directory (another inode), so a call on
// the name gets a thread restricted for the new directory: it writes the
// new one and not the renamed old one. A key without the workspace's
// identity would hand the call the old thread, whose rules grant the
// renamed directory.
func TestThreadKeyHoldsTheWorkspaceIdentity(t *testing.T) {
	l := testLauncher(t)
	base := varTmpDir(t, "dshsim-key-")
	ws := filepath.Join(base, "ws")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	p := sandbox.Policy{Mode: sandbox.WorkspaceWrite, WorkspaceRoot: ws}
	run(t, l, p)
	if err := os.Rename(ws, ws+".old"); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sh", "-c", fmt.Sprintf("echo x > %s/new; echo x > %s.old/old", ws, ws))
	if err := l.Start(cmd, p); err != nil {
		t.Fatal(err)
	}
	waittest.Exit(t, cmd, "the confined command")
	if _, err := os.Stat(filepath.Join(ws, "new")); err != nil {
		t.Errorf("the call could not write the workspace made again: %v", err)
	}
	if _, err := os.Stat(filepath.Join(ws+".old", "old")); err == nil {
		t.Errorf("the call wrote the renamed old workspace")
	}
}

// TestRoomFor: a thread is made only with threadReserve of the soft limit
// free, the boundary included.
func TestRoomFor(t *testing.T) {
	for _, tc := range []struct {
		n    int
		soft uint64
		want bool
	}{
		{0, threadReserve, true},
		{1, threadReserve, false},
		{84, 100, true},
		{85, 100, false},
		{1000, 100, false},
	} {
		if got := roomFor(tc.n, tc.soft); got != tc.want {
			t.Errorf("roomFor(%d, %d) = %v, want %v", tc.n, tc.soft, got, tc.want)
		}
	}
}

// TestChildLimit: a command's RLIMIT_NPROC keeps threadReserve for this
// process, never below 1, and is not set for root or without a limit.
func TestChildLimit(t *testing.T) {
	for _, tc := range []struct {
		uid  int
		soft uint64
		want uint64
	}{
		{0, 100, 0},
		{1000, rlimInfinity, 0},
		{1000, 100, 100 - threadReserve},
		{1000, threadReserve + 1, 1},
		{1000, threadReserve, 1},
		{1000, 1, 1},
	} {
		if got := childLimit(tc.uid, tc.soft); got != tc.want {
			t.Errorf("childLimit(%d, %d) = %d, want %d", tc.uid, tc.soft, got, tc.want)
		}
	}
}
