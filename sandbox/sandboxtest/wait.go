package sandboxtest

import (
	"testing"
	"time"
)

// WaitDeadline bounds a test's wait for something to settle (a process, a
// job): a bug that keeps it from settling fails the test after the deadline
// instead of hanging the package.
const WaitDeadline = 30 * time.Second

// WaitClosed waits for done to close, or fails t after [WaitDeadline]
// naming what did not settle.
func WaitClosed(t testing.TB, done <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-done:
	case <-time.After(WaitDeadline):
		t.Fatalf("%s did not settle within %s", what, WaitDeadline)
	}
}
