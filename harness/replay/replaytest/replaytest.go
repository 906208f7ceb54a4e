package replaytest

import (
	"context"
	"github.com/dshsim/dshsim/harness/replay/recording"
	"path/filepath"
	"testing"

	"github.com/dshsim/dshsim/harness/replay"
	"github.com/dshsim/dshsim/harness/replay/isolate"
)

// Params configure [RunParams].
type Params struct {
	// Dirs are recordings, or directories holding them (replay.Discover).
	Dirs []string
	// Options are each replay's (the zero value: dsh-replay's defaults).
	// Trusted is refused: a test replays contained or not at all.
	Options replay.Options
	// Check, when set, runs in a recording's subtest once it matched, for
	// assertions of the caller's own on the result.
	Check func(t *testing.T, r *replay.Result)
}

// Run replays every recording under dirs, each as a parallel subtest of t
// named for it, which fails with the recording's first difference.
func Run(t *testing.T, dirs ...string) {
	t.Helper()
	RunParams(t, Params{Dirs: dirs})
}

// RunParams is [Run] with options.
func RunParams(t *testing.T, p Params) {
	t.Helper()
	if p.Options.Trusted {
		t.Fatal("replaytest: Options.Trusted would replay uncontained, on the host; a test replays contained")
	}
	isolate.Require(t)
	found, err := replay.Discover(p.Dirs)
	if err != nil {
		t.Fatal(err)
	}
	if len(found) == 0 {
		t.Fatalf("replaytest: no recording under %q", p.Dirs)
	}
	for _, dir := range found {
		t.Run(subtestName(dir), func(t *testing.T) {
			t.Parallel()
			r := replay.Replay(context.Background(), dir, p.Options)
			for _, n := range r.Notes {
				t.Logf("note: %s", n)
			}
			if r.Verdict != replay.Match {
				t.Fatalf("%s: %s\n%s", r.Verdict, r.FirstDifference(), r.Detail())
			}
			if p.Check != nil {
				p.Check(t, r)
			}
		})
	}
}

// subtestName is the recording's name, after its front end's for a front
// end beyond ACP (headless/advanced-toolchain: names repeat across front
// ends), so -run selects either.
func subtestName(dir string) string {
	name := filepath.Base(filepath.Clean(dir))
	if fe, err := recording.DetectFrontend(dir, name); err == nil && fe != recording.ACP {
		return string(fe) + "/" + name
	}
	return name
}
