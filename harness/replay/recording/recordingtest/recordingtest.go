package recordingtest

import (
	"testing"

	"github.com/dshsim/dshsim/harness/replay/recording"
)

// Load is [recording.Load] of dir; the test fails on its error.
func Load(t testing.TB, dir string) *recording.Recording {
	t.Helper()
	rec, err := recording.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	return rec
}
