package waittest

import (
	"os/exec"
	"sync"
	"testing"
	"time"
)

// Deadline bounds a wait for one call to return, one event or one process.
const Deadline = 30 * time.Second

// BatchDeadline bounds a wait for a batch of whole replays or upstream runs
// running at once.
const BatchDeadline = 5 * time.Minute

// Within runs f and fails t when f has not returned after d, naming what.
// When f stopped the test (t.Fatal or t.Skip from f's goroutine), Within
// stops it too.
func Within(t testing.TB, d time.Duration, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	returned := false
	go func() {
		defer close(done)
		f()
		returned = true
	}()
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-done:
		switch {
		case returned:
		case t.Skipped():
			t.SkipNow()
		default:
			t.FailNow() // f ended its goroutine (t.Fatal) without returning
		}
	case <-timer.C:
		t.Fatalf("still waiting for %s after %s: it hangs", what, d)
	}
}

// Do runs f within [Deadline].
func Do(t testing.TB, what string, f func()) {
	t.Helper()
	Within(t, Deadline, what, f)
}

// Call returns f's result, failing t when f has not returned within
// [Deadline].
func Call[T any](t testing.TB, what string, f func() T) T {
	t.Helper()
	var v T
	Within(t, Deadline, what, func() { v = f() })
	return v
}

// Closed waits within [Deadline] for ch to close or deliver a value.
func Closed[T any](t testing.TB, ch <-chan T, what string) {
	t.Helper()
	recv(t, Deadline, ch, what)
}

// Recv receives one value from ch within [Deadline].
func Recv[T any](t testing.TB, ch <-chan T, what string) T {
	t.Helper()
	return recv(t, Deadline, ch, what)
}

func recv[T any](t testing.TB, d time.Duration, ch <-chan T, what string) T {
	t.Helper()
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case v := <-ch:
		return v
	case <-timer.C:
		t.Fatalf("still waiting for %s after %s: it hangs", what, d)
		var zero T
		return zero
	}
}

// Group waits for wg within [Deadline].
func Group(t testing.TB, wg *sync.WaitGroup, what string) {
	t.Helper()
	Within(t, Deadline, what, wg.Wait)
}

// Until polls cond every tick until it holds, failing t when it does not
// within [Deadline].
func Until(t testing.TB, tick time.Duration, what string, cond func() bool) {
	t.Helper()
	until(t, Deadline, tick, what, cond)
}

func until(t testing.TB, d, tick time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("still waiting for %s after %s: it hangs", what, d)
		}
		time.Sleep(tick)
	}
}

// Exit waits for cmd (started) to exit within [Deadline] and returns its
// Wait error; past the deadline it kills and reaps the process and fails t.
func Exit(t testing.TB, cmd *exec.Cmd, what string) error {
	t.Helper()
	return exit(t, Deadline, cmd, what)
}

func exit(t testing.TB, d time.Duration, cmd *exec.Cmd, what string) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case err := <-done:
		return err
	case <-timer.C:
		cmd.Process.Kill()
		<-done
		t.Fatalf("still waiting for %s (pid %d) to exit after %s: it hangs; killed it", what, cmd.Process.Pid, d)
		return nil
	}
}
