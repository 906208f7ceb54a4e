package sandboxtest

import (
	"testing"

	"github.com/dshsim/dshsim/sandbox"
)

// Provider is the real provider with backend as its only candidate (for
// landlock, the runner [Runner] built); it skips t when the backend cannot
// confine here, naming what is missing.
func Provider(t testing.TB, backend string) *sandbox.Provider {
	t.Helper()
	cfg := sandbox.Config{Platform: "linux", Chain: []string{backend}}
	switch backend {
	case sandbox.BackendBwrap:
		RequireBwrap(t)
	case sandbox.BackendLandlock:
		RequireLandlock(t, 1)
		cfg.LauncherPath = Runner(t)
	}
	p, err := sandbox.NewProvider(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
