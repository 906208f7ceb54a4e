package waittest

import (
	"fmt"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// recorder is a testing.TB whose Fatal ends only the calling goroutine and
// records the message, as the testing package does.
type recorder struct {
	testing.TB
	mu      sync.Mutex
	msgs    []string
	failed  bool
	skipped bool
}

func (r *recorder) Helper() {}
func (r *recorder) Fatalf(format string, args ...any) {
	r.mu.Lock()
	r.failed = true
	r.msgs = append(r.msgs, fmt.Sprintf(format, args...))
	r.mu.Unlock()
	runtime.Goexit()
}
func (r *recorder) FailNow() { r.mu.Lock(); r.failed = true; r.mu.Unlock(); runtime.Goexit() }
func (r *recorder) SkipNow() { r.mu.Lock(); r.skipped = true; r.mu.Unlock(); runtime.Goexit() }
func (r *recorder) Skipped() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.skipped
}

// run runs f as a test body on r and reports whether it ran to its end.
func run(t *testing.T, f func(tb testing.TB)) (r *recorder, completed bool) {
	r = &recorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		f(r)
		completed = true
	}()
	select {
	case <-done:
	case <-time.After(Deadline):
		t.Fatal("the recorded test body hung")
	}
	return r, completed
}

const short = 50 * time.Millisecond

func TestAHangFailsWithWhatItWaitedFor(t *testing.T) {
	block := make(chan struct{})
	defer close(block)
	checks := []struct {
		name string
		body func(tb testing.TB)
	}{
		{"Within", func(tb testing.TB) { Within(tb, short, "the blocked call", func() { <-block }) }},
		{"recv", func(tb testing.TB) { recv(tb, short, (<-chan struct{})(block), "the blocked call") }},
		{"until", func(tb testing.TB) {
			until(tb, short, time.Millisecond, "the blocked call", func() bool { return false })
		}},
		{"exit", func(tb testing.TB) {
			cmd := exec.Command("sleep", "60")
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			exit(tb, short, cmd, "the blocked call")
		}},
	}
	for _, c := range checks {
		t.Run(c.name, func(t *testing.T) {
			r, completed := run(t, c.body)
			if completed || !r.failed || len(r.msgs) != 1 || !strings.HasPrefix(r.msgs[0], "still waiting for the blocked call") || !strings.Contains(r.msgs[0], "it hangs") {
				t.Errorf("completed %v, failed %v, messages %q", completed, r.failed, r.msgs)
			}
		})
	}
}

func TestAWaitThatEndsPasses(t *testing.T) {
	ch := make(chan int, 1)
	ch <- 7
	var wg sync.WaitGroup
	wg.Go(func() {})
	r, completed := run(t, func(tb testing.TB) {
		if got := Call(tb, "a call", func() int { return 3 }); got != 3 {
			t.Errorf("Call = %d", got)
		}
		if got := Recv(tb, ch, "a value"); got != 7 {
			t.Errorf("Recv = %d", got)
		}
		Group(tb, &wg, "the group")
		Until(tb, time.Millisecond, "a condition", func() bool { return true })
		cmd := exec.Command("true")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		if err := Exit(tb, cmd, "true"); err != nil {
			t.Errorf("Exit: %v", err)
		}
	})
	if !completed || r.failed {
		t.Errorf("completed %v, failed %v: %q", completed, r.failed, r.msgs)
	}
}

// TestAFatalInsideStopsTheTest: f stopping the test from its own goroutine
// stops the waiting test too; a skip stays a skip.
func TestAFatalInsideStopsTheTest(t *testing.T) {
	r, completed := run(t, func(tb testing.TB) { Do(tb, "a call", func() { tb.Fatalf("inside") }) })
	if completed || !r.failed || r.skipped {
		t.Errorf("fatal: completed %v, failed %v, skipped %v", completed, r.failed, r.skipped)
	}
	r, completed = run(t, func(tb testing.TB) { Do(tb, "a call", func() { tb.SkipNow() }) })
	if completed || r.failed || !r.skipped {
		t.Errorf("skip: completed %v, failed %v, skipped %v", completed, r.failed, r.skipped)
	}
}
