package replay_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/dshsim/dshsim/harness/replay"
	"github.com/dshsim/dshsim/harness/replay/asuser"
	"github.com/dshsim/dshsim/harness/replay/hostile"
	"github.com/dshsim/dshsim/harness/replay/isolate"
	"github.com/dshsim/dshsim/harness/replay/recording"
	"github.com/dshsim/dshsim/internal/waittest"
	"github.com/dshsim/dshsim/sandbox/sandboxtest"
)

// TestConcurrentReplaysOfOneRecording: two replays of one recording at once
// both match. bash-spill writes upstream's fixed spill root
// /tmp/dsh-acp-snap-ee77dff02 and escalation-approved the fixed file
// /tmp/dsh-escalated.txt, which it then removes: in a shared /tmp the two runs
// would meet there.
func TestConcurrentReplaysOfOneRecording(t *testing.T) {
	isolate.Require(t)
	for _, name := range []string{"bash-spill", "escalation-approved"} {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(root, "transcripts", name)
			results := make([]*replay.Result, 2)
			var wg sync.WaitGroup
			for i := range results {
				wg.Go(func() { results[i] = replay.Replay(context.Background(), dir, replay.Options{}) })
			}
			waittest.Within(t, waittest.BatchDeadline, "the two replays to end", wg.Wait)
			for i, r := range results {
				if r.Verdict != replay.Match {
					t.Errorf("run %d: %s\n%s", i, r.Summary(), r.Detail())
				}
			}
		})
	}
}

// TestNothingLeftInTmp: a replay under a name of its own (so its fixed spill
// root is unique to this test) spills, and afterwards neither the spill root
// nor a lock file beside it exists in the host's /tmp; nor does the fixed
// file the escalation recording writes.
func TestNothingLeftInTmp(t *testing.T) {
	isolate.Require(t)
	name := "isolated-" + filepath.Base(t.TempDir())
	dir := filepath.Join(t.TempDir(), name)
	if err := recording.CopyTree(filepath.Join(root, "transcripts", "bash-spill"), dir); err != nil {
		t.Fatal(err)
	}
	spillRoot := replay.SpillRoot(name)
	r := replay.Replay(context.Background(), dir, replay.Options{})
	if r.Verdict != replay.Match {
		t.Fatalf("%s\n%s", r.Summary(), r.Detail())
	}
	if !strings.Contains(strings.Join(resultTexts(r), "\n"), "{{spillLocator:bash.txt}}") {
		t.Fatal("the replay did not spill; the check below would prove nothing")
	}
	for _, p := range []string{spillRoot, spillRoot + ".lock", "/tmp/dsh-escalated.txt"} {
		if _, err := os.Lstat(p); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s exists in the host's /tmp after the replay (%v)", p, err)
		}
	}
}

func resultTexts(r *replay.Result) []string {
	var out []string
	for _, it := range r.Got {
		if s, ok := it.Fields["text"].(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// TestAsAnotherUser replays as root, then runs the replay tests as uid 65534
// on the same machine: every recording matches for a user without
// privileges too (private /tmp through a user namespace; bwrap and Landlock
// inside), including two concurrent runs of one recording, and the
// constructed model's wait for the background jobs.
func TestAsAnotherUser(t *testing.T) {
	skipSweepUnderShort(t)
	if os.Getuid() != 0 {
		t.Skip("needs root (CAP_SETUID) to run the replay tests as uid 65534")
	}
	isolate.Require(t)
	if r := replay.Replay(context.Background(), filepath.Join(root, "transcripts", "bash-spill"), replay.Options{}); r.Verdict != replay.Match {
		t.Fatalf("as root: %s\n%s", r.Summary(), r.Detail())
	}
	asuser.RunTests(t, asuser.Run{
		Tests:       []string{"TestTranscriptsMatch", "TestOurRecordingsMatch", "TestModelWaitsForBackgroundJobs", "TestConcurrentReplaysOfOneRecording", "TestNothingLeftInTmp", "TestWorkspaceWriteRecordingsUnderLandlock", "TestHostileRecordingLeavesNothingOnTheHost"},
		Executables: map[string]string{sandboxtest.RunnerEnv: sandboxtest.Runner(t), hostile.ProgramEnv: hostile.Program(t)},
	})
}

// TestTmpSizeBoundsTheReplay: Options.TmpSize is the size of the replay's
// /tmp: a seed larger than it cannot be copied in, and the error says why.
func TestTmpSizeBoundsTheReplay(t *testing.T) {
	isolate.Require(t)
	dir := filepath.Join(t.TempDir(), "hook-cc-pretool-deny")
	if err := recording.CopyTree(filepath.Join(root, "transcripts", "hook-cc-pretool-deny"), dir); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "workspace", "pad.bin"), make([]byte, 1<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := replay.Replay(context.Background(), dir, replay.Options{TmpSize: 1 << 20}); r.Verdict != replay.Failed || !strings.Contains(r.Error, "no space left on device") {
		t.Errorf("a 1 MiB seed in a 1 MiB /tmp: %s", r.Summary())
	}
	if r := replay.Replay(context.Background(), dir, replay.Options{TmpSize: 4 << 20}); r.Verdict != replay.Match {
		t.Errorf("in a 4 MiB /tmp: %s, want a match (nothing reads pad.bin)", r.Summary())
	}
}
