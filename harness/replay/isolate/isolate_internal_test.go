package isolate

import (
	"context"
	"strings"
	"sync"
	"testing"

	"golang.org/x/sys/unix"
)

// TestUnavailableIsOneClearError: where no namespaces can be created (here:
// clone refuses CLONE_FS beside a new mount namespace with EINVAL, as a
// kernel without user namespaces refuses CLONE_NEWUSER), Available and Run
// give one error that says what is missing, and no child runs.
func TestUnavailableIsOneClearError(t *testing.T) {
	extraCloneFlags = unix.CLONE_FS
	probeOnce, probed, probeErr = sync.Once{}, 0, nil
	t.Cleanup(func() {
		extraCloneFlags = 0
		probeOnce, probed, probeErr = sync.Once{}, 0, nil
	})
	err := Available()
	t.Log(err)
	if err == nil {
		t.Fatal("Available() = nil although clone cannot succeed")
	}
	for _, want := range []string{"cannot contain a child here", "namespaces", "user namespaces look disabled or restricted"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	if strings.Contains(err.Error(), "\n") {
		t.Errorf("error %q spans lines", err)
	}
	if _, rerr := Probe(context.Background(), ProbeRequest{}); rerr == nil || rerr.Error() != err.Error() {
		t.Errorf("Run after a failed probe: %v, want the same error", rerr)
	}
}
