package sandbox_test

import (
	"testing"

	"github.com/dshsim/dshsim/harness"
	"github.com/dshsim/dshsim/sandbox"
)

// TestProfilesGolden pins the argv every platform's builder emits for both
// confined modes (the spec's "profiles dump", workspace <ws>).
func TestProfilesGolden(t *testing.T) {
	harness.Golden(t, "testdata", "profiles.golden", []byte(sandbox.ProfilesDump("<ws>")))
}
