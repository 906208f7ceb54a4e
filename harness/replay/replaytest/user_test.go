package replaytest_test

import (
	"testing"

	"github.com/dshsim/dshsim/harness/replay/replaytest"
)

// TestRecordings is a user's test of their recordings as docs/replay.md
// shows it: the page copies this function, and scenarios/replay_gotest.txtar
// checks the copy line for line. testdata/recordings holds upstream's
// fs-read.
func TestRecordings(t *testing.T) {
	replaytest.Run(t, "testdata/recordings")
}
