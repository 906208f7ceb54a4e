package inproc

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/dshsim/dshsim/internal/waittest"
	"github.com/dshsim/dshsim/sandbox"
	"github.com/dshsim/dshsim/sandbox/internal/llsys"
	"github.com/dshsim/dshsim/sandbox/procfs"
	"github.com/dshsim/dshsim/sandbox/sandboxtest"
)

// varTmpDir is sandboxtest.TempDir: workspace-write grants the host /tmp
// wholesale, so targets under /tmp (t.TempDir) could not show the workspace
// boundary.
var varTmpDir = sandboxtest.TempDir

func testLauncher(t testing.TB) *Launcher {
	t.Helper()
	sandboxtest.RequireLandlock(t, 1)
	l, err := New()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

// nnpThreads lists the threads of this process with no_new_privs set: the
// restriction always sets it, so a live restricted thread shows up here.
func nnpThreads(t *testing.T) []string {
	t.Helper()
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, task := range tasks {
		status, err := procfs.Proc.Status("self/task/" + task.Name())
		if err != nil {
			continue // the thread exited meanwhile
		}
		if procfs.ParseStatus(status)["NoNewPrivs"] == "1" {
			out = append(out, task.Name())
		}
	}
	return out
}

func TestChildIsConfined(t *testing.T) {
	l := testLauncher(t)
	ws, outside := varTmpDir(t, "dshsim-ws-"), varTmpDir(t, "dshsim-out-")
	tests := []struct {
		name     string
		mode     sandbox.Mode
		target   string
		wantExit int
	}{
		{name: "workspace-write writes inside", mode: sandbox.WorkspaceWrite, target: filepath.Join(ws, "in.txt"), wantExit: 0},
		{name: "workspace-write cannot write outside", mode: sandbox.WorkspaceWrite, target: filepath.Join(outside, "out.txt"), wantExit: 1},
		{name: "read-only cannot write inside", mode: sandbox.ReadOnly, target: filepath.Join(ws, "ro.txt"), wantExit: 1},
		{name: "read-only keeps the dev null sink", mode: sandbox.ReadOnly, target: "/dev/null", wantExit: 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var stderr strings.Builder
			cmd := exec.Command("bash", "-c", "echo hi > "+tc.target)
			cmd.Stderr = &stderr
			if err := l.Start(cmd, sandbox.Policy{Mode: tc.mode, WorkspaceRoot: ws}); err != nil {
				t.Fatal(err)
			}
			err := waittest.Exit(t, cmd, "the confined command")
			exit := 0
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				exit = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if exit != tc.wantExit {
				t.Errorf("exit %d, want %d; stderr %q", exit, tc.wantExit, stderr.String())
			}
			if tc.wantExit != 0 && !strings.Contains(stderr.String(), "Permission denied") {
				t.Errorf("stderr %q lacks the Landlock denial", stderr.String())
			}
			if _, err := os.Stat(tc.target); tc.wantExit != 0 && err == nil {
				t.Errorf("%s exists after a denied write", tc.target)
			}
		})
	}
}

// TestParentThreadsStayUnconfinedAndRestrictedThreadsDie: concurrent starts
// of one policy share one restricted thread, every other thread of this
// process keeps writing where it likes, and Close ends the thread.
func TestParentThreadsStayUnconfinedAndRestrictedThreadsDie(t *testing.T) {
	l := testLauncher(t)
	if got := nnpThreads(t); len(got) != 0 {
		t.Skipf("the test process already runs with no_new_privs on threads %v", got)
	}
	ws, outside := varTmpDir(t, "dshsim-ws-"), varTmpDir(t, "dshsim-out-")
	var mu sync.Mutex
	var tids []int
	l.onThread = func() {
		mu.Lock()
		tids = append(tids, llsys.Gettid())
		mu.Unlock()
	}
	const starts = 40
	var wg sync.WaitGroup
	for i := 0; i < starts; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			cmd := exec.Command("bash", "-c", fmt.Sprintf("echo x > %s/child-%d", outside, i))
			if err := l.Start(cmd, sandbox.Policy{Mode: sandbox.WorkspaceWrite, WorkspaceRoot: ws}); err != nil {
				t.Error(err)
				return
			}
			if waittest.Exit(t, cmd, "the confined command") == nil {
				t.Errorf("child %d wrote outside the workspace", i)
			}
		}(i)
	}
	waittest.Group(t, &wg, "the concurrent starts to end")
	// The parent writes outside the workspace afterwards, many times, from
	// many goroutines (so from every thread the runtime has).
	var pw sync.WaitGroup
	for g := 0; g < 16; g++ {
		pw.Add(1)
		go func(g int) {
			defer pw.Done()
			for i := 0; i < 50; i++ {
				if err := os.WriteFile(fmt.Sprintf("%s/parent-%d-%d", outside, g, i), []byte("x"), 0o644); err != nil {
					t.Errorf("parent write %d/%d: %v", g, i, err)
					return
				}
			}
		}(g)
	}
	waittest.Group(t, &pw, "the parent's writes")
	if len(tids) != starts {
		t.Fatalf("%d starts recorded on a restricted thread, want %d", len(tids), starts)
	}
	if distinct := slices.Compact(slices.Sorted(slices.Values(tids))); len(distinct) != 1 {
		t.Errorf("one policy's starts ran on threads %v, want one", distinct)
	}
	for _, tid := range tids {
		if tid == os.Getpid() {
			t.Errorf("the main thread was restricted")
		}
	}
	// Closed, every restricted thread is gone: none is left to run other goroutines.
	l.Close()
	threadsEnd(t, tids)
}

// threadsEnd fails t unless each thread of tids ends within ten seconds and
// no thread of the process is left with no_new_privs (restricted).
func threadsEnd(t *testing.T, tids []int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for _, tid := range tids {
		for {
			if _, err := os.Stat(fmt.Sprintf("/proc/self/task/%d", tid)); errors.Is(err, os.ErrNotExist) {
				break
			}
			if time.Now().After(deadline) {
				t.Errorf("restricted thread %d is still alive", tid)
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	if got := nnpThreads(t); len(got) != 0 {
		t.Errorf("threads with no_new_privs (restricted) still alive: %v", got)
	}
}

func TestBadPolicyRunsNothing(t *testing.T) {
	l := testLauncher(t)
	for _, p := range []sandbox.Policy{
		{Mode: sandbox.DangerFullAccess, WorkspaceRoot: "/"},
		{Mode: sandbox.ReadOnly, WorkspaceRoot: "relative"},
		{Mode: "bogus", WorkspaceRoot: "/"},
	} {
		cmd := exec.Command("true")
		if err := l.Start(cmd, p); !errors.Is(err, sandbox.ErrBadInput) || cmd.Process != nil {
			t.Errorf("Start(%+v) = %v, process %v", p, err, cmd.Process)
		}
	}
}

// TestStartRefusesARootRedirectableFromTmp: the in-process path checks a call
// as the provider does (sandbox.Validate): a workspace-write root reached
// through a symlink inside /tmp, which an earlier confined command could have
// planted, is not granted. Before the check was shared, the in-process path
// granted the link's target.
func TestStartRefusesARootRedirectableFromTmp(t *testing.T) {
	l := testLauncher(t)
	// In the OS temp directory (a temp area the rule names wherever TMPDIR
	// points), not t.TempDir: that follows GOTMPDIR, which may lie outside.
	dir, err := os.MkdirTemp(os.TempDir(), "dshsim-redirect-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	real := filepath.Join(dir, "real")
	os.Mkdir(real, 0o755)
	link := filepath.Join(dir, "link")
	os.Symlink(real, link)
	cmd := exec.Command("touch", filepath.Join(link, "ran"))
	if err := l.Start(cmd, sandbox.Policy{Mode: sandbox.WorkspaceWrite, WorkspaceRoot: link}); !errors.Is(err, sandbox.ErrBadInput) || !strings.Contains(err.Error(), "symlink "+link) {
		t.Errorf("Start through %s: %v, want a refusal naming the symlink", link, err)
	}
	if _, err := l.Confine(context.Background(), cmd.Args, sandbox.Policy{Mode: sandbox.WorkspaceWrite, WorkspaceRoot: link}); !errors.Is(err, sandbox.ErrBadInput) {
		t.Errorf("Confine through %s: %v, want a refusal", link, err)
	}
	if _, err := os.Stat(filepath.Join(real, "ran")); err == nil {
		t.Error("the command ran")
	}
}

// TestChildHoldsNoCapability: a child the launcher starts reads its own
// /proc/self/status; as root it must hold no capability at all, twice on
// the one thread of its policy, while this process keeps its own.
func TestChildHoldsNoCapability(t *testing.T) {
	own, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	{
		{
			l := testLauncher(t)
			ws := varTmpDir(t, "dshsim-ws-")
			for range 2 {
				var out strings.Builder
				cmd := exec.Command("cat", "/proc/self/status")
				cmd.Stdout = &out
				if err := l.Start(cmd, sandbox.Policy{Mode: sandbox.WorkspaceWrite, WorkspaceRoot: ws}); err != nil {
					t.Fatal(err)
				}
				if err := waittest.Exit(t, cmd, "the confined command"); err != nil {
					t.Fatal(err)
				}
				sandboxtest.CheckNoCapabilities(t, out.String())
			}
			if after, _ := os.ReadFile("/proc/self/status"); procfs.ParseStatus(string(after))["CapEff"] != procfs.ParseStatus(string(own))["CapEff"] {
				t.Errorf("this process's CapEff changed from %s to %s", procfs.ParseStatus(string(own))["CapEff"], procfs.ParseStatus(string(after))["CapEff"])
			}
		}
	}
}

// TestABICapNarrowsLikeTheRunner: capped at ABI 2 (no TRUNCATE right), the
// launcher reports partial and an outside truncate goes through, as under
// landlock-run --abi-cap 2; uncapped it is denied and the report is full.
func TestABICapNarrowsLikeTheRunner(t *testing.T) {
	sandboxtest.RequireLandlock(t, 5)
	for _, tc := range []struct {
		cap      int
		enf      sandbox.Enforcement
		truncate bool
	}{{cap: 2, enf: sandbox.Partial, truncate: true}, {cap: 0, enf: sandbox.Full, truncate: false}} {
		l, err := NewWithOptions(Options{ABICap: tc.cap})
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		ws, out := varTmpDir(t, "dshsim-ws-"), varTmpDir(t, "dshsim-out-")
		target := filepath.Join(out, "t")
		os.WriteFile(target, []byte("original\n"), 0o644)
		// truncate(2) by path, not open(O_WRONLY) and ftruncate
		ca, err := l.Confine(context.Background(), []string{"perl", "-e", "truncate($ARGV[0], 0) or die", target}, sandbox.Policy{Mode: sandbox.WorkspaceWrite, WorkspaceRoot: ws})
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(ca.Argv[0], ca.Argv[1:]...)
		if err := ca.Start(cmd); err != nil {
			t.Fatal(err)
		}
		waittest.Exit(t, cmd, "the confined command")
		st, _ := os.Stat(target)
		if ca.Enforcement != tc.enf || (st.Size() == 0) != tc.truncate {
			t.Errorf("cap %d: enforcement %s, truncated %v; want %s, %v", tc.cap, ca.Enforcement, st.Size() == 0, tc.enf, tc.truncate)
		}
	}
}

// TestSignalsStayInTheCommandsDomain: the child cannot signal a process
// outside its own nested domain (a sleep standing in for anything this
// process started), hardened or not, and the report says so; taken the
// nested layer away, only the hardening's scope stops it. The hardening
// also isolates abstract unix sockets and the environment (the escape
// corpus covers both).
func TestSignalsStayInTheCommandsDomain(t *testing.T) {
	sandboxtest.RequireLandlock(t, 6)
	sentinel := exec.Command("sleep", "60")
	if err := sentinel.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sentinel.Process.Kill(); sentinel.Wait() })
	ws := varTmpDir(t, "dshsim-ws-")
	for _, tc := range []struct {
		harden, noNest, signals bool
	}{
		{harden: false, noNest: false, signals: false},
		{harden: true, noNest: false, signals: false},
		{harden: false, noNest: true, signals: true},
		{harden: true, noNest: true, signals: false},
	} {
		l, err := newLauncher(Options{Harden: tc.harden}, knobs{noNest: tc.noNest})
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		ca, err := l.Confine(context.Background(), []string{"bash", "-c", fmt.Sprintf("kill -0 %d", sentinel.Process.Pid)}, sandbox.Policy{Mode: sandbox.ReadOnly, WorkspaceRoot: ws})
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(ca.Argv[0], ca.Argv[1:]...)
		if err := ca.Start(cmd); err != nil {
			t.Fatal(err)
		}
		if signalled := waittest.Exit(t, cmd, "the confined command") == nil; signalled != tc.signals {
			t.Errorf("%+v: the child signalled a process outside its domain: %v", tc, signalled)
		}
		if d := cmp.Diff(isolationOf(tc.harden, true), ca.Isolated); d != "" || ca.ScrubSecrets != tc.harden {
			t.Errorf("%+v: Isolated (-want +got):\n%s\nScrubSecrets %v", tc, d, ca.ScrubSecrets)
		}
	}
	if _, err := NewWithOptions(Options{Harden: true, ABICap: 5}); err == nil || !strings.Contains(err.Error(), "--scope needs Landlock ABI 6") {
		t.Errorf("Harden capped below ABI 6: %v, want a refusal", err)
	}
}

// TestIsolationOf: the agent always; the nested signal scope only where
// scopes exist, and then it replaces the hardening's own signal entry.
func TestIsolationOf(t *testing.T) {
	for _, tc := range []struct {
		harden, scopes bool
		want           []string
	}{
		{false, false, []string{IsolatedAgent}},
		{false, true, []string{IsolatedAgent, IsolatedNestedSignal}},
		{true, true, append([]string{IsolatedAgent, IsolatedNestedSignal}, sandbox.Isolation(sandbox.BackendLandlock, true)[2:]...)},
	} {
		if d := cmp.Diff(tc.want, isolationOf(tc.harden, tc.scopes)); d != "" {
			t.Errorf("isolationOf(%v, %v) (-want +got):\n%s", tc.harden, tc.scopes, d)
		}
	}
}

// TestStartRefusesAWorkspaceThatIsNotTheCheckedOne: the in-process path
// pins its grant to the directory Validate saw, as the runner's --rw-inode
// does: a policy whose workspace now opens as another directory (moved away
// and made again between the check and the start) starts nothing, with the
// runner's fatal text; the same workspace, checked again, starts.
func TestStartRefusesAWorkspaceThatIsNotTheCheckedOne(t *testing.T) {
	l := testLauncher(t)
	base := varTmpDir(t, "dshsim-inproc-pin-")
	ws := filepath.Join(base, "ws")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	checked, err := sandbox.Validate([]string{"true"}, sandbox.Policy{Mode: sandbox.WorkspaceWrite, WorkspaceRoot: ws})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(ws, ws+".d"); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("true")
	err = l.start(cmd, checked)
	if err == nil || cmd.Process != nil || !strings.Contains(err.Error(), "rule path changed since it was checked: "+ws+" is now the file ") {
		t.Fatalf("start with a stale check = %v (process %v), want the runner's refusal and nothing started", err, cmd.Process)
	}
	again, err := sandbox.Validate([]string{"true"}, sandbox.Policy{Mode: sandbox.WorkspaceWrite, WorkspaceRoot: ws})
	if err != nil {
		t.Fatal(err)
	}
	cmd = exec.Command("true")
	if err := l.start(cmd, again); err != nil {
		t.Fatal(err)
	}
	waittest.Exit(t, cmd, "the confined command")
}

// TestReusedThreadServesOnlyItsPolicy: calls of three
// policies run interleaved on one launcher (workspace A read-only, A
// writable, B writable) and each is held to its own policy: a read-only
// call after a writable one cannot write A, a writable call after a
// read-only one can, and a call for B cannot write A nor one for A write
// B. It runs twice, the read-only call first and the writable call first,
// since whichever restriction a shared thread got first is the one it
// would carry. Calls of one policy did share one thread, and no two
// policies did (else the test would prove nothing about reuse). A launcher
// that served two policies from one thread (keyed by the root alone, by
// the mode alone, or one thread for all) fails here.
func TestReusedThreadServesOnlyItsPolicy(t *testing.T) {
	sandboxtest.RequireLandlock(t, 1)
	a, b := varTmpDir(t, "dshsim-reuse-a-"), varTmpDir(t, "dshsim-reuse-b-")
	roA := sandbox.Policy{Mode: sandbox.ReadOnly, WorkspaceRoot: a}
	wwA := sandbox.Policy{Mode: sandbox.WorkspaceWrite, WorkspaceRoot: a}
	wwB := sandbox.Policy{Mode: sandbox.WorkspaceWrite, WorkspaceRoot: b}
	type step struct {
		name   string
		policy sandbox.Policy
		target string
		writes bool
	}
	roFirst := []step{
		{"read-only A cannot write A", roA, a, false},
		{"writable A writes A after a read-only call", wwA, a, true},
		{"read-only A cannot write A after a writable call", roA, a, false},
		{"writable B writes B", wwB, b, true},
		{"writable B cannot write A", wwB, a, false},
		{"writable A cannot write B", wwA, b, false},
		{"writable A writes A again", wwA, a, true},
		{"read-only A cannot write A again", roA, a, false},
	}
	wwFirst := append([]step{{"writable A writes A first", wwA, a, true}}, roFirst...)
	for name, steps := range map[string][]step{"read-only first": roFirst, "writable first": wwFirst} {
		t.Run(name, func(t *testing.T) {
			l, err := NewWithOptions(Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			var mu sync.Mutex
			var tid int
			l.onThread = func() { mu.Lock(); tid = llsys.Gettid(); mu.Unlock() }
			threads := map[sandbox.Policy]map[int]bool{}
			for i, st := range steps {
				target := filepath.Join(st.target, fmt.Sprintf("%s-%d", strings.ReplaceAll(name, " ", "-"), i))
				cmd := exec.Command("sh", "-c", "echo x > "+target)
				if err := l.Start(cmd, st.policy); err != nil {
					t.Fatalf("%s: %v", st.name, err)
				}
				err := waittest.Exit(t, cmd, "the confined command")
				_, statErr := os.Stat(target)
				if wrote := err == nil && statErr == nil; wrote != st.writes {
					t.Errorf("%s: wrote %v (exit %v), want %v", st.name, wrote, err, st.writes)
				}
				mu.Lock()
				if threads[st.policy] == nil {
					threads[st.policy] = map[int]bool{}
				}
				threads[st.policy][tid] = true
				mu.Unlock()
			}
			seen := map[int]sandbox.Policy{}
			for p, tids := range threads {
				if len(tids) != 1 {
					t.Errorf("policy %s %s used %d threads, want 1 reused", p.Mode, p.WorkspaceRoot, len(tids))
				}
				for id := range tids {
					if q, ok := seen[id]; ok {
						t.Errorf("thread %d served two policies: %s %s and %s %s", id, q.Mode, q.WorkspaceRoot, p.Mode, p.WorkspaceRoot)
					}
					seen[id] = p
				}
			}
		})
	}
}

// TestReusedThreadsAreBounded: past maxWorkers policies, the least
// recently used idle thread ends, and a policy whose thread ended gets a
// new one that still holds its call to it.
func TestReusedThreadsAreBounded(t *testing.T) {
	sandboxtest.RequireLandlock(t, 1)
	l, err := NewWithOptions(Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var first sandbox.Policy
	for i := 0; i <= maxWorkers; i++ {
		root, err := filepath.EvalSymlinks(varTmpDir(t, "dshsim-bound-"))
		if err != nil {
			t.Fatal(err)
		}
		p := sandbox.Policy{Mode: sandbox.ReadOnly, WorkspaceRoot: root}
		if i == 0 {
			first = p
		}
		cmd := exec.Command("true")
		if err := l.Start(cmd, p); err != nil {
			t.Fatal(err)
		}
		waittest.Exit(t, cmd, "the confined command")
	}
	l.mu.Lock()
	n, kept := len(l.workers), 0
	for k := range l.workers {
		if k.root == first.WorkspaceRoot {
			kept++
		}
	}
	l.mu.Unlock()
	if n != maxWorkers || kept != 0 {
		t.Errorf("%d workers kept (want %d), the least recently used one kept: %v", n, maxWorkers, kept != 0)
	}
	target := filepath.Join(first.WorkspaceRoot, "x")
	cmd := exec.Command("sh", "-c", "echo x > "+target)
	if err := l.Start(cmd, first); err != nil {
		t.Fatal(err)
	}
	if waittest.Exit(t, cmd, "the confined command") == nil {
		t.Errorf("a read-only call on a remade thread wrote %s", target)
	}
}

// TestPartialNoticeAsTheRunner: below ABI 5 the command's stderr begins
// with the runner's partial notice, byte for byte what landlock-run --abi-cap
// N prints before the same command's own stderr, on a new thread and on a
// reused one; at full enforcement neither prints it. (A recording of a
// partial Landlock run shows the notice in the model's text.)
func TestPartialNoticeAsTheRunner(t *testing.T) {
	sandboxtest.RequireLandlock(t, 5)
	runner := sandboxtest.Runner(t)
	ws := varTmpDir(t, "dshsim-notice-")
	argv := []string{"sh", "-c", "echo own >&2; exit 3"}
	p := sandbox.Policy{Mode: sandbox.ReadOnly, WorkspaceRoot: ws}
	for _, abiCap := range []int{3, 5} {
		var want strings.Builder
		checked, err := sandbox.Validate(argv, p)
		if err != nil {
			t.Fatal(err)
		}
		rc := exec.Command(runner, sandbox.Wrap([]string{"--abi-cap", fmt.Sprint(abiCap)}, sandbox.LandlockArgs(checked), argv)...)
		rc.Stderr = &want
		rc.Run()
		if hasNotice := strings.Contains(want.String(), sandbox.LandlockPartialNotice); hasNotice != (abiCap < 5) {
			t.Fatalf("cap %d: the runner's stderr %q; notice %v", abiCap, want.String(), hasNotice)
		}
		for _, reuse := range []bool{false, true} {
			l, err := NewWithOptions(Options{ABICap: abiCap})
			if err != nil {
				t.Fatal(err)
			}
			if reuse {
				// a second start on the thread the first one made
				first := exec.Command("true")
				if err := l.Start(first, p); err != nil {
					t.Fatal(err)
				}
				waittest.Exit(t, first, "the confined command")
			}
			defer l.Close()
			var got strings.Builder
			cmd := exec.Command(argv[0], argv[1:]...)
			cmd.Stderr = &got
			if err := l.Start(cmd, p); err != nil {
				t.Fatal(err)
			}
			waittest.Exit(t, cmd, "the confined command")
			if got.String() != want.String() {
				t.Errorf("cap %d reuse %v: stderr %q, the runner's %q", abiCap, reuse, got.String(), want.String())
			}
		}
	}
}
