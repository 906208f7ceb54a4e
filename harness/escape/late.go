package escape

import (
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/dshsim/dshsim/sandbox"
	"github.com/dshsim/dshsim/sandbox/procfs"
	"github.com/dshsim/dshsim/sandbox/spawn"
)

// Unconfined is the backend of the table of what changed after the call: no
// confiner at all, its attempts run in danger-full-access as an escalated
// call does, and only a change made after the call returned counts (during
// the call the command may write anywhere). It runs the late attempts
// ([ClassLate]) only.
const Unconfined = "unconfined"

// LateBackends are the columns of the after-the-call table.
var LateBackends = []string{Unconfined}

// runEnv names the run's token in the command's environment: every process
// the attempt starts inherits it, and one still running once the call
// returned ([attemptRun.leftovers]) is found by it.
const runEnv = "DSHSIM_ESCAPE_RUN"

// newToken is a fresh run token.
func newToken() string { return "dshsim-run-" + rand.Text() }

// leftovers finds the live processes whose environment holds the run's
// token once the call returned, kills them, and names each as a change of
// "harness/process": nothing a call starts may outlive it. A process this
// identity may not read is not this run's.
func (r *attemptRun) leftovers() []Change {
	procs, _ := procfs.Proc.All()
	var seen []Change
	want := runEnv + "=" + r.token
	for _, p := range procs {
		if p.Ended() || p.PID == os.Getpid() {
			continue
		}
		env, err := procfs.Proc.Environ(p.PID)
		if err != nil || !slices.Contains(env, want) {
			continue
		}
		syscall.Kill(p.PID, syscall.SIGKILL)
		seen = append(seen, Change{"harness/process", fmt.Sprintf("%s (pid %d) was still running after the call returned", p.Comm, p.PID)})
	}
	return seen
}

// observeAfter is observe for the unconfined backend: the command runs
// first, and the snapshots (of the whole run directory, the workspace
// included) are taken after the call returned and after the settle time,
// so only what changed once the call was over shows.
func (r *attemptRun) observeAfter(ctx context.Context, res *Result) error {
	if err := r.runCommand(ctx, res); err != nil {
		return err
	}
	seen := r.leftovers()
	before, err := Take(r.roots, nil)
	if err != nil {
		return err
	}
	time.Sleep(r.a.Settle)
	return r.conclude(res, before, nil, seen)
}

// racerCalls bounds the racer's calls per run (it also stops with the
// command).
const racerCalls = 2000

// racer makes $SWAP_WS, another call's workspace in /tmp (which a Landlock
// workspace-write command may rename: the temp area), and $SWAP_TARGET, an
// outside directory the snapshots cover; until the command is over it
// starts new calls under the same backend and mode with workspace $SWAP_WS
// that write $SWAP_TARGET/x, two at a time: the calls a swapped workspace
// would redirect. Each must be refused or denied; a file in $SWAP_TARGET is
// a change like any other.
func (r *attemptRun) racer(ctx context.Context) error {
	target, err := os.MkdirTemp(r.cfg.Base, "swap-target-")
	if err != nil {
		return err
	}
	r.cleanup = append(r.cleanup, func() { os.RemoveAll(target) })
	parent, err := os.MkdirTemp("/tmp", "dshsim-escape-swap-")
	if err != nil {
		return err
	}
	r.cleanup = append(r.cleanup, func() { os.RemoveAll(parent) })
	ws := filepath.Join(parent, "ws")
	for _, d := range []string{target, parent} {
		if err := os.Chmod(d, 0o755); err != nil {
			return err
		}
	}
	if err := os.Mkdir(ws, 0o755); err != nil {
		return err
	}
	r.roots["swap-target"] = target
	r.env = append(r.env, "SWAP_WS="+ws, "SWAP_TARGET="+target)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var calls atomic.Int64
	for range 2 {
		wg.Go(func() {
			for calls.Add(1) <= racerCalls && ctx.Err() == nil {
				select {
				case <-stop:
					return
				default:
				}
				spawn.Run(ctx, spawn.Request{Argv: []string{"bash", "-c", `echo x > "$SWAP_TARGET/x"`}, Env: []string{r.env[0], "SWAP_TARGET=" + target},
					Policy: sandbox.Policy{Mode: r.m, WorkspaceRoot: ws}, Confiner: r.b.Confiner, Dir: "/", Timeout: 10 * time.Second, OutputDir: r.cfg.Base})
			}
		})
	}
	r.teardown = append(r.teardown, func() { close(stop); wg.Wait() })
	return nil
}

// gitDir makes $WS/.git, a repository's directory with a config and a
// hooks directory, and covers it by the snapshots under workspace-write
// (which leaves the workspace out of them).
func (r *attemptRun) gitDir(context.Context) error {
	git := filepath.Join(r.ws, ".git")
	if err := os.MkdirAll(filepath.Join(git, "hooks"), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(git, "config"), []byte("[core]\n"), 0o644); err != nil {
		return err
	}
	for _, p := range []string{filepath.Join(git, "hooks"), git, filepath.Join(git, "config")} {
		if err := os.Chtimes(p, fixedTime, fixedTime); err != nil {
			return err
		}
	}
	if r.m == sandbox.WorkspaceWrite {
		r.roots["git"] = git // read-only: the run's snapshot covers the workspace already
	}
	return nil
}

// modesOf are the modes backend b runs in: its own, or [Modes].
func modesOf(b Backend) []sandbox.Mode {
	if len(b.Modes) > 0 {
		return b.Modes
	}
	return Modes
}

// LateAttempts are the attempts of the after-the-call table (class late).
func LateAttempts(all []Attempt) []Attempt { return OfClass(all, ClassLate) }

// OfClass are the attempts of class c among all, in their order.
func OfClass(all []Attempt, c Class) []Attempt {
	var out []Attempt
	for _, a := range all {
		if a.Class == c {
			out = append(out, a)
		}
	}
	return out
}
