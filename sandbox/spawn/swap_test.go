package spawn

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dshsim/dshsim/internal/waittest"
	"github.com/dshsim/dshsim/sandbox"
	"github.com/dshsim/dshsim/sandbox/inproc"
)

// Bounds of the swap race per backend, whichever comes first: calls that
// passed Validate (refusals before the start are cheap and not counted),
// and time.
const (
	swapRaceCalls  = 2000
	swapRaceLength = 3 * time.Second
	swapRacers     = 4
)

// TestSwappedWorkspaceGrantsNothingOutside races a review's attack on every
// backend: one confined background command loops
//
//	mv $WS $WS.d; ln -s $TARGET $WS; rm $WS; mv $WS.d $WS
//
// (the workspace lies in /tmp, which Landlock lets it rename), while new
// confined calls with that workspace run `echo x > $TARGET/x`. Before the
// runner and the in-process path opened their rule paths without following
// links, pinned to the directory Validate saw, one call in seven landed its
// grant on $TARGET and wrote there. Each call is refused (Validate, or the
// runner failing closed), or runs and is denied: nothing may appear in
// $TARGET. Under the Landlock backends the race must have been live (some
// calls refused); bwrap's /tmp is the sandbox's own, so its swapper never
// touches the host's workspace.
func TestSwappedWorkspaceGrantsNothingOutside(t *testing.T) {
	for _, backend := range []string{sandbox.BackendBwrap, sandbox.BackendLandlock, inproc.Backend} {
		t.Run(backend, func(t *testing.T) {
			c := confiner(t, backend)
			parent, err := os.MkdirTemp("/tmp", "dshsim-swap-")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.RemoveAll(parent) })
			ws, target := filepath.Join(parent, "ws"), varTmpDir(t, "dshsim-target-")
			if err := os.Mkdir(ws, 0o755); err != nil {
				t.Fatal(err)
			}
			swapper, err := Start(context.Background(), Request{
				Argv:   bash(`while :; do mv "$WS" "$WS.d" 2>/dev/null && ln -s "$TARGET" "$WS" && rm "$WS" && mv "$WS.d" "$WS"; done`),
				Env:    []string{"PATH=/usr/bin:/bin", "WS=" + ws, "TARGET=" + target},
				Policy: sandbox.Policy{Mode: sandbox.WorkspaceWrite, WorkspaceRoot: ws}, Confiner: c, Grace: 100 * time.Millisecond, OutputDir: varTmpDir(t, "dshsim-swap-out-"),
			})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { swapper.Kill(); waittest.Closed(t, swapper.Done(), "the killed swapper to settle") })
			st := raceCalls(t, c, ws, target)
			t.Logf("%s: %d calls started in %s (%d more refused before the start): %d refused by the runner, %d ran, every write denied",
				backend, st.started.Load(), st.took, st.refused.Load(), st.runnerFailed.Load(), st.ran.Load())
			ents, err := os.ReadDir(target)
			if err != nil {
				t.Fatal(err)
			}
			if len(ents) != 0 || st.wrote.Load() != 0 {
				t.Errorf("%d calls wrote outside the workspace: %s holds %d entries", st.wrote.Load(), target, len(ents))
			}
			if backend != sandbox.BackendBwrap && st.refused.Load()+st.runnerFailed.Load() == 0 {
				t.Errorf("no call was refused: the swap was never seen, so the race proved nothing")
			}
		})
	}
}

type raceStats struct {
	started, refused, runnerFailed, ran, wrote atomic.Int64
	took                                       time.Duration
}

// raceCalls runs confined `echo x > $TARGET/x` calls with workspace ws from
// swapRacers goroutines until swapRaceCalls calls started (passed Validate)
// or swapRaceLength passed, and counts how each ended.
func raceCalls(t *testing.T, c Confiner, ws, target string) *raceStats {
	st := &raceStats{}
	start := time.Now()
	deadline := start.Add(swapRaceLength)
	var wg sync.WaitGroup
	for range swapRacers {
		wg.Go(func() {
			for time.Now().Before(deadline) && st.started.Load() < swapRaceCalls {
				res, err := Run(context.Background(), Request{Argv: bash(`echo x > "$TARGET/x"`), Env: []string{"PATH=/usr/bin:/bin", "TARGET=" + target},
					Policy: sandbox.Policy{Mode: sandbox.WorkspaceWrite, WorkspaceRoot: ws}, Confiner: c, Dir: "/"})
				var ue *sandbox.UnavailableError
				switch {
				case errors.Is(err, sandbox.ErrBadInput):
					st.refused.Add(1)
					continue
				case errors.As(err, &ue):
					st.runnerFailed.Add(1)
				case err != nil:
					t.Errorf("call: %v", err)
					return
				case res.ExitCode == 0:
					st.wrote.Add(1)
				default:
					st.ran.Add(1)
				}
				st.started.Add(1)
			}
		})
	}
	waittest.Group(t, &wg, "the racing calls to return")
	st.took = time.Since(start).Round(time.Millisecond)
	return st
}
