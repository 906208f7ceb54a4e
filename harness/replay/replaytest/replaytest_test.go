package replaytest_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/dshsim/dshsim/harness/replay"
	"github.com/dshsim/dshsim/harness/replay/isolate"
	"github.com/dshsim/dshsim/harness/replay/replaytest"
)

const root = "../../.."

// helperEnv makes TestHelper run the replays the outer test asked for
// (the recordings in its value, separated by commas); unset, it skips.
const helperEnv = "DSHSIM_REPLAYTEST_HELPER"

// TestHelper is run by the tests below in a child test binary, where its
// failures are the output under test.
func TestHelper(t *testing.T) {
	dirs := os.Getenv(helperEnv)
	if dirs == "" {
		t.Skip("run by the other tests of this package")
	}
	if dirs == "none" {
		replaytest.Run(t)
		return
	}
	if dirs == "trusted" {
		replaytest.RunParams(t, replaytest.Params{Dirs: []string{filepath.Join(root, "transcripts", "fs-read")}, Options: replay.Options{Trusted: true}})
		return
	}
	replaytest.Run(t, strings.Split(dirs, ",")...)
}

// helper runs TestHelper over dirs in a child test binary with the extra
// flags, and returns its output.
func helper(t *testing.T, dirs string, flags ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(os.Args[0], append([]string{"-test.run", "^TestHelper$", "-test.v"}, flags...)...)
	cmd.Env = append(os.Environ(), helperEnv+"="+dirs)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// TestRun replays recordings as subtests of their names, each parallel, and
// passes when they match; the replays were contained (no note says
// otherwise).
func TestRun(t *testing.T) {
	isolate.Require(t)
	dirs := filepath.Join(root, "transcripts", "fs-read") + "," + filepath.Join(root, "transcripts", "fs-write")
	out, err := helper(t, dirs)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, want := range []string{"=== PAUSE TestHelper/fs-read", "=== PAUSE TestHelper/fs-write", "--- PASS: TestHelper/fs-read", "--- PASS: TestHelper/fs-write", "note: session.jsonl: events compared"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, replay.TrustedNote) {
		t.Errorf("a replay ran uncontained:\n%s", out)
	}
}

// TestRunFailsWithTheFirstDifference: a recording that differs fails its
// subtest with the first difference (field path, expected, got); -run
// selects subtests by recording name, so the others never replay.
func TestRunFailsWithTheFirstDifference(t *testing.T) {
	isolate.Require(t)
	flagged := filepath.Join(root, "testdata", "replay", "flagged")
	out, err := helper(t, flagged, "-test.run", "^TestHelper$/^changed-seed$")
	if err == nil {
		t.Fatalf("a mismatching recording passed:\n%s", out)
	}
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`--- FAIL: TestHelper/changed-seed`),
		regexp.MustCompile(`mismatch: turn 1, tool/result call_\w+ ok: meta\.lines\[0\]\.text: expected "hello", got "goodbye"`),
		regexp.MustCompile(`first difference: turn 1, tool/result`),
	} {
		if !want.MatchString(out) {
			t.Errorf("output lacks %s:\n%s", want, out)
		}
	}
	if n := strings.Count(out, "=== RUN   TestHelper/"); n != 1 {
		t.Errorf("-run selected %d subtests, want changed-seed alone:\n%s", n, out)
	}
}

// TestRunRefusesWhatCannotBeRun: no directory, a directory without a
// recording, and a request to replay uncontained fail the test.
func TestRunRefusesWhatCannotBeRun(t *testing.T) {
	isolate.Require(t)
	for dirs, want := range map[string]string{
		"none":      "replaytest: no recording under []",
		t.TempDir(): "holds no recordings",
		"trusted":   "replaytest: Options.Trusted would replay uncontained",
	} {
		out, err := helper(t, dirs)
		if err == nil || !strings.Contains(out, want) {
			t.Errorf("%s: %v, output lacks %q:\n%s", dirs, err, want, out)
		}
	}
}
