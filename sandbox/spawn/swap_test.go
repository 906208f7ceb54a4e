package spawn

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/dshsim/dshsim/internal/waittest"
	"github.com/dshsim/dshsim/sandbox"
	"github.com/dshsim/dshsim/sandbox/chain"
	"github.com/dshsim/dshsim/sandbox/chain/chaintest"
	"github.com/dshsim/dshsim/sandbox/sandboxtest"
)

// The swap race's size: the calls that must run (pass every check and
// start the command) per confiner, shared by its three swaps (667, 667 and
// 666 calls), 2000 in the full run and 300 with -short (make race), and
// how many race at once.
const (
	swapRaceRuns      = 2000
	swapRaceRunsShort = 300
	swapRacers        = 4
	// swapRefusedPause is how long a racer waits after the check refused
	// its call (the attacker's link was in place) before its next call:
	// the link's phase. Without it the racers spun on refusals (tens of
	// thousands per race), which took most of the race's CPU time.
	swapRefusedPause = 250 * time.Microsecond
)

// swapConfiners are the confiners the swap race runs through: the stack's
// default on a host with bwrap (package sandbox/chain over the platform
// chain, which selects bwrap), the Landlock runner (the chain's fallback),
// and the stack's default on a host without bwrap (the in-process Landlock
// path).
var swapConfiners = []struct {
	name string
	make func(t *testing.T) Confiner
}{
	{"stack-default-bwrap", stackDefaultBwrap},
	{"landlock-runner", func(t *testing.T) Confiner { return provider(t, sandbox.BackendLandlock) }},
	{"stack-default-no-bwrap", func(t *testing.T) Confiner { return chaintest.Landlock(t, sandbox.Config{}) }},
}

// stackDefaultBwrap is the stack's confiner as package stack makes it
// (chain.New over the platform chain), on this host, where bwrap must be
// what it selects; it skips t without a usable bwrap.
func stackDefaultBwrap(t *testing.T) Confiner {
	t.Helper()
	sandboxtest.RequireBwrap(t)
	c, err := chain.New(chain.Config{Sandbox: sandbox.Config{LauncherPath: sandboxtest.Runner(t)}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if b, _ := c.Selected(); b != sandbox.BackendBwrap {
		t.Fatalf("the stack's default chain selected %q on a host with a usable bwrap", b)
	}
	return c
}

// swapper is the attacker: a perl program, run as a confined command whose
// workspace is the directory holding the swapped entry, that swaps it for a
// relative link to the outside over and over, until killed: the link is in
// place for 250 µs, then the directory for 750 µs. So a call's check sees
// the directory most of the time, and a few milliseconds later, when the
// confinement binds or opens the root, the link is often there: with bwrap
// binding by path, 103 to 122 of the 203 calls that ran per swap (in a
// run of 200) wrote outside. Few starts are wasted on a root the
// confinement refuses, each as costly as a call that runs.
// Arguments: the swap, the entry's name, the link's target, renameat2's
// syscall number. "rename" and "parent" move the directory aside, put the
// link at its name, then take the link away and move it back; "exchange"
// swaps the directory and a link beside it atomically (renameat2
// RENAME_EXCHANGE), so the name is never missing.
const swapper = `
use strict; use warnings;
my ($swap, $name, $link, $nr) = @ARGV;
sub pause { select(undef, undef, undef, $_[0]) }
if ($swap eq "exchange") {
	symlink($link, "$name.x") or die "symlink: $!\n";
	while (1) {
		syscall($nr, -100, $name, -100, "$name.x", 2) == 0 or die "renameat2(RENAME_EXCHANGE): $!\n";
		pause(0.00025);
		syscall($nr, -100, $name, -100, "$name.x", 2) == 0 or die "renameat2(RENAME_EXCHANGE): $!\n";
		pause(0.00075);
	}
}
while (1) {
	rename($name, "$name.d") or die "rename: $!\n";
	symlink($link, $name) or die "symlink: $!\n";
	pause(0.00025);
	unlink($name) or die "unlink: $!\n";
	rename("$name.d", $name) or die "rename back: $!\n";
	pause(0.00075);
}
`

// swapVictim is each racing call: it says it ran, then writes relative to
// its working directory (the workspace as named), through the workspace's
// path and to the outside directly, last, so its exit is that write's: a
// grant or a working directory that followed a swapped link lands one of
// them outside.
const swapVictim = `echo ran; echo x > "z$N"; echo x > "$WS/x$N"; echo x > "$TARGET/y$N"`

// swapLayout is one swap's directories: the attacker's workspace, the
// calls' workspace, the entry the attacker swaps and where its link leads,
// and the outside directories that must stay empty (the target, and for a
// parent swap the directory the link leads to, which holds only the
// target).
type swapLayout struct {
	attackerWS, ws, entry, link string
	target, outParent           string
}

// newSwapLayout makes swap's directories, the attacker's workspace in a new
// directory under base (/tmp for the race: a temp area, where Validate
// refuses a link, so the race shows whether the check saw the swap): for
// "rename" and "exchange" the workspace is <attacker>/ws and its link leads
// to the target; for "parent" the workspace is <attacker>/p/ws and p's link
// leads to a directory outside whose ws is the target.
func newSwapLayout(t *testing.T, swap, base string) swapLayout {
	attacker, err := os.MkdirTemp(base, "dshsim-swap-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(attacker) })
	out := varTmpDir(t, "dshsim-target-")
	l := swapLayout{attackerWS: attacker, entry: "ws", ws: filepath.Join(attacker, "ws"), target: out}
	leadsTo := out
	if swap == "parent" {
		l.entry, l.ws, l.outParent, l.target = "p", filepath.Join(attacker, "p", "ws"), out, filepath.Join(out, "ws")
		if err := os.Mkdir(l.target, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(l.ws, 0o755); err != nil {
		t.Fatal(err)
	}
	if l.link, err = filepath.Rel(attacker, leadsTo); err != nil {
		t.Fatal(err)
	}
	return l
}

// outside lists what the calls left outside the workspace: the target's
// entries, and for a parent swap anything beside the target.
func (l swapLayout) outside(t *testing.T) []string {
	var got []string
	dirs := []string{l.target}
	if l.outParent != "" {
		dirs = append(dirs, l.outParent)
	}
	for _, d := range dirs {
		ents, err := os.ReadDir(d)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ents {
			if p := filepath.Join(d, e.Name()); p != l.target {
				got = append(got, p)
			}
		}
	}
	return got
}

// TestSwappedWorkspaceGrantsNothingOutside races the swap attack on every
// confiner: a confined attacker swaps the racing calls' workspace for a
// link to the outside (its leaf renamed away, exchanged atomically with a
// link, or its parent renamed away) while new confined calls with that
// workspace start and write through it. A call the check refuses, or whose
// confinement refuses the swapped root at its start (landlock-run's "rule
// path changed", bwrap's failed bind), ran nothing and is not counted; the
// races go on until swapRaceRuns calls per confiner ran the command (a
// third for each swap), and none may have written outside. Before bwrap bound the workspace through the descriptor
// the check opened, the stack's default with bwrap wrote outside in about
// half of the calls that ran; before the runner and the in-process path
// pinned their grant, one in seven. The race must have been live: the
// check refused some calls, having seen the swap.
func TestSwappedWorkspaceGrantsNothingOutside(t *testing.T) {
	if _, err := exec.LookPath("perl"); err != nil {
		t.Skip("the attacker is a perl program: perl not installed")
	}
	total := swapRaceSize(t)
	swaps := []string{"rename", "exchange", "parent"}
	for _, conf := range swapConfiners {
		for i, swap := range swaps {
			runs := swapShare(total, len(swaps), i)
			t.Run(conf.name+"/"+swap, func(t *testing.T) {
				c := conf.make(t)
				l := newSwapLayout(t, swap, "/tmp")
				attacker, err := Start(context.Background(), Request{
					Argv:   []string{"perl", "-e", swapper, swap, l.entry, l.link, strconv.Itoa(unix.SYS_RENAMEAT2)},
					Env:    []string{"PATH=/usr/bin:/bin"},
					Policy: sandbox.Policy{Mode: sandbox.WorkspaceWrite, WorkspaceRoot: l.attackerWS}, Confiner: c, Grace: 100 * time.Millisecond,
					OutputDir: varTmpDir(t, "dshsim-swap-out-"),
				})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { attacker.Kill(); waittest.Closed(t, attacker.Done(), "the killed attacker to settle") })
				st := raceCalls(t, c, l, runs, attacker.Done())
				t.Logf("%s: %s", t.Name(), st)
				select {
				case <-attacker.Done():
					_, stderr := attacker.OutputSoFar()
					t.Fatalf("the attacker stopped during the race: %s", stderr.Text)
				default:
				}
				if got := l.outside(t); len(got) != 0 || st.ran.Load() < int64(runs) {
					t.Errorf("%d of %d calls that ran wrote outside the workspace (want %d calls, none outside): %d files, the first %q", callsIn(got), st.ran.Load(), runs, len(got), got[:min(len(got), 5)])
				}
				if st.refused.Load() == 0 {
					t.Errorf("the check refused no call: the swap was never seen, so the race proved nothing")
				}
			})
		}
	}
}

// swapRaceSize is how many calls must run per confiner, its three swaps
// together: swapRaceRuns, swapRaceRunsShort under -short, or
// DSHSIM_SWAP_RACE_RUNS when set (a positive number; .ci/run's
// unprivileged pass sets a smaller one, its root pass runs the full race).
func swapRaceSize(t *testing.T) int {
	t.Helper()
	if v := os.Getenv("DSHSIM_SWAP_RACE_RUNS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("DSHSIM_SWAP_RACE_RUNS=%q: want a positive number of calls", v)
		}
		return n
	}
	if testing.Short() {
		return swapRaceRunsShort
	}
	return swapRaceRuns
}

// swapShare is swap i's part of total calls shared by n swaps: total/n,
// one more for each of the first total%n swaps, so the parts add up to
// total; at least one call each.
func swapShare(total, n, i int) int {
	share := total / n
	if i < total%n {
		share++
	}
	return max(share, 1)
}

// raceStats counts how the racing calls ended.
type raceStats struct {
	refused      atomic.Int64 // by the check (sandbox.Validate): nothing started
	runnerFailed atomic.Int64 // the confinement refused the swapped root at its start
	startFailed  atomic.Int64 // the start failed (its working directory was swapped away)
	ran          atomic.Int64 // the command ran
	denied       atomic.Int64 // ... and its last write, to the outside, was denied
	took         time.Duration
}

func (st *raceStats) String() string {
	return fmt.Sprintf("%d calls ran (%d denied their write to the outside) in %s; %d refused by the check, %d by the confinement at its start, %d failed to start",
		st.ran.Load(), st.denied.Load(), st.took, st.refused.Load(), st.runnerFailed.Load(), st.startFailed.Load())
}

// raceCalls runs swapVictim with workspace l.ws from swapRacers goroutines
// until runs calls ran it or the attacker stopped, and counts how each call
// ended. It fails t when no call ran for waittest.Deadline (a hung call, or
// a workspace the swap left refused), never for a slow race.
func raceCalls(t *testing.T, c Confiner, l swapLayout, runs int, stopped <-chan struct{}) *raceStats {
	st := &raceStats{}
	start := time.Now()
	var n atomic.Int64
	var stop atomic.Bool
	var wg sync.WaitGroup
	for range swapRacers {
		wg.Go(func() {
			for st.ran.Load() < int64(runs) && !isClosed(stopped) && !stop.Load() {
				if !raceCall(t, c, l, n.Add(1), st) {
					return
				}
			}
		})
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	for last := int64(-1); ; {
		select {
		case <-done:
			st.took = time.Since(start).Round(time.Millisecond)
			return st
		case <-time.After(waittest.Deadline):
			if ran := st.ran.Load(); ran != last {
				last = ran
				continue
			}
			t.Errorf("no call ran for %s (%s): a call hangs, or the swap left the workspace refused", waittest.Deadline, st)
			stop.Store(true)
			waittest.Closed(t, done, "the racing calls to stop")
			return st
		}
	}
}

// raceCall runs one victim call, numbered n, and counts how it ended;
// false after an unexpected error (a test failure). The call is confined by
// c and started as a caller of the argv contract starts it (the
// confinement's descriptors passed as it says, its own start when it starts
// the command itself), not through Start: spawn's process bookkeeping cost
// more than the confinement itself (per call, on the machine it was
// measured on: bwrap 7 ms without it and 21 ms with it, the runner 13 and
// 22, the in-process path 3.5 and 7.6), and the race needs thousands of
// calls. TestSwapAfterTheCheckGrantsNothingOutside runs each swap through
// Start.
func raceCall(t *testing.T, c Confiner, l swapLayout, n int64, st *raceStats) bool {
	argv := []string{"sh", "-c", swapVictim}
	w, err := c.Confine(context.Background(), argv, sandbox.Policy{Mode: sandbox.WorkspaceWrite, WorkspaceRoot: l.ws})
	var ue *sandbox.UnavailableError
	switch {
	case errors.Is(err, sandbox.ErrBadInput):
		st.refused.Add(1)
		time.Sleep(swapRefusedPause) // the swap is at the link: come back when it may not be
		return true
	case errors.As(err, &ue):
		st.runnerFailed.Add(1)
		return true
	case err != nil:
		t.Errorf("call %d: %v", n, err)
		return false
	}
	run, files := w.Inherit(nil)
	cmd := exec.Command(run[0], run[1:]...)
	var stdout, stderr strings.Builder
	cmd.Dir, cmd.Stdout, cmd.Stderr, cmd.ExtraFiles = l.ws, &stdout, &stderr, files
	cmd.Env = []string{"PATH=/usr/bin:/bin", "WS=" + l.ws, "TARGET=" + l.target, "N=" + strconv.FormatInt(n, 10)}
	start := (*exec.Cmd).Start
	if w.Start != nil {
		start = w.Start
	}
	err = start(cmd)
	w.Close()
	if err != nil {
		if errors.As(w.StartError(err, cmd.Path, l.ws), &ue) {
			st.runnerFailed.Add(1)
		} else {
			st.startFailed.Add(1) // its working directory was swapped away
		}
		return true
	}
	cmd.Wait()
	ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
	rep, err := w.Classify(ws.ExitStatus(), ws.Signaled(), stderr.String())
	switch {
	case errors.As(err, &ue):
		st.runnerFailed.Add(1)
	case !strings.HasPrefix(stdout.String(), "ran\n"):
		t.Errorf("call %d neither ran nor failed: %v, stdout %q, stderr %q", n, cmd.ProcessState, stdout.String(), stderr.String())
		return false
	default:
		st.ran.Add(1)
		if rep.Denied {
			st.denied.Add(1)
		}
	}
	return true
}

// isClosed reports whether ch is closed, without waiting.
func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// swapNow makes l's swap once, as the attacker does, and returns where the
// directory the calls' workspace named now is, and how to undo the swap.
func (l swapLayout) swapNow(t *testing.T, swap string) (moved string, undo func()) {
	t.Helper()
	entry := filepath.Join(l.attackerWS, l.entry)
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	if swap == "exchange" {
		must(os.Symlink(l.link, entry+".x"))
		exchange := func() { must(unix.Renameat2(unix.AT_FDCWD, entry, unix.AT_FDCWD, entry+".x", unix.RENAME_EXCHANGE)) }
		exchange()
		return strings.Replace(l.ws, entry, entry+".x", 1), func() { exchange(); must(os.Remove(entry + ".x")) }
	}
	must(os.Rename(entry, entry+".d"))
	must(os.Symlink(l.link, entry))
	return strings.Replace(l.ws, entry, entry+".d", 1), func() { must(os.Remove(entry)); must(os.Rename(entry+".d", entry)) }
}

// callsIn is how many calls wrote the files files: the number after each
// name's one-letter prefix (x, y, z) is the call's.
func callsIn(files []string) int {
	calls := map[string]bool{}
	for _, f := range files {
		calls[filepath.Base(f)[1:]] = true
	}
	return len(calls)
}

// swapAfterCheck is a confiner that makes the race's window certain: it
// swaps right after its confiner's check (Confine) returns, before the
// start.
type swapAfterCheck struct {
	Confiner
	swap func()
}

func (s swapAfterCheck) Confine(ctx context.Context, argv []string, p sandbox.Policy) (sandbox.ConfinedArgv, error) {
	w, err := s.Confiner.Confine(ctx, argv, p)
	if err == nil {
		s.swap()
	}
	return w, err
}

// TestSwapAfterTheCheckGrantsNothingOutside makes each swap of the race
// once, certainly inside the window: after the check, before the start,
// through Start (the stack's path), on every confiner, with the workspace in
// /tmp (bwrap binds it on its own tmpfs) and outside the temp areas (bwrap
// finds the place to bind it through the host's tree, where the link now
// is). The call is refused at its start (bwrap's bind found another
// directory at the name, or its place moved; landlock-run met the link) or
// runs; nothing lands outside, and under bwrap a call that ran wrote
// through the workspace's name into the directory the check saw, wherever
// it now is: the grant followed the directory, not the name.
func TestSwapAfterTheCheckGrantsNothingOutside(t *testing.T) {
	for _, conf := range swapConfiners {
		for _, where := range []string{"tmp", "scratch"} {
			for _, swap := range []string{"rename", "exchange", "parent"} {
				t.Run(conf.name+"/"+where+"/"+swap, func(t *testing.T) {
					c := conf.make(t)
					base := "/tmp"
					if where == "scratch" {
						base = varTmpDir(t, "dshsim-swap-base-")
					}
					l := newSwapLayout(t, swap, base)
					var moved string
					c = swapAfterCheck{c, func() {
						var undo func()
						moved, undo = l.swapNow(t, swap)
						t.Cleanup(undo)
					}}
					res, err := Run(context.Background(), Request{Argv: []string{"sh", "-c", swapVictim},
						Env:    []string{"PATH=/usr/bin:/bin", "WS=" + l.ws, "TARGET=" + l.target, "N=1"},
						Policy: sandbox.Policy{Mode: sandbox.WorkspaceWrite, WorkspaceRoot: l.ws}, Confiner: c, Dir: l.ws})
					var ue *sandbox.UnavailableError
					_, inErr := os.Stat(filepath.Join(moved, "x1"))
					ran := err == nil && strings.HasPrefix(res.Stdout.Text, "ran\n")
					switch {
					case errors.As(err, &ue):
						t.Logf("refused at the start: %s", ue.Detail)
					case ran:
						t.Logf("ran: exit %d, wrote into the checked directory (now %s): %v; stderr %q", res.ExitCode, moved, inErr == nil, res.Stderr.Text)
					default:
						t.Fatalf("neither refused nor ran: %+v, %v", res, err)
					}
					if got := l.outside(t); len(got) != 0 {
						t.Errorf("the call wrote outside the workspace: %q", got)
					}
					if ran && res.Sandbox.Backend == sandbox.BackendBwrap && inErr != nil {
						t.Errorf("bwrap ran the call but its write through $WS is not in the directory the check saw (%s): %v", moved, inErr)
					}
				})
			}
		}
	}
}

// TestSwapShare: the swaps' parts add up to the confiner's calls, differ by
// at most one, and none is empty.
func TestSwapShare(t *testing.T) {
	tests := []struct {
		total, n int
		want     []int
	}{
		{2000, 3, []int{667, 667, 666}},
		{300, 3, []int{100, 100, 100}},
		{601, 3, []int{201, 200, 200}},
		{602, 3, []int{201, 201, 200}},
		{1, 3, []int{1, 1, 1}},
	}
	for _, tt := range tests {
		var got []int
		for i := range tt.n {
			got = append(got, swapShare(tt.total, tt.n, i))
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("swapShare(%d, %d, 0..%d) = %v, want %v", tt.total, tt.n, tt.n-1, got, tt.want)
		}
	}
}
