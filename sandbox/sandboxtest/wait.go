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

// Receive waits for a value on ch and returns it, or fails t after
// [WaitDeadline] naming what did not come.
func Receive[T any](t testing.TB, ch <-chan T, what string) T {
	t.Helper()
	return receive(t, ch, what, WaitDeadline)
}

func receive[T any](t testing.TB, ch <-chan T, what string, deadline time.Duration) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(deadline):
		t.Fatalf("%s did not come within %s", what, deadline)
	}
	var zero T
	return zero
}
