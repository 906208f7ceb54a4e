package jobs

import (
	"testing"
	"time"
)

// waitDeadline bounds every wait of this package's tests on a channel that
// closes when something settles: a bug that keeps it open fails the test
// after the deadline instead of hanging the package.
const waitDeadline = 30 * time.Second

// waitClosed waits for done to close, or fails t after waitDeadline.
func waitClosed(t testing.TB, done <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-done:
	case <-time.After(waitDeadline):
		t.Fatalf("%s did not settle within %s", what, waitDeadline)
	}
}
