package inproc

import (
	"errors"
	"fmt"
	"os/exec"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/dshsim/dshsim/sandbox"
	"github.com/dshsim/dshsim/sandbox/sandboxtest"
)

// BenchmarkSpawnRatios measures every way of spawning /bin/true interleaved,
// round by round, so all of them see the same machine load, and reports the
// median of each as a ratio to the bare spawn of the same run
// ("<variant>-x"), plus the bare median in microseconds ("bare-µs"). One
// b.N iteration is one round (each variant once, in rotating order). The
// ns/op of this benchmark is the cost of a round and is not meaningful alone.
// "bare-handoff" starts the bare command from another locked thread, without
// Landlock: the price of the thread handoff the in-process path pays.
func BenchmarkSpawnRatios(b *testing.B) {
	ws := sandboxtest.TempDir(b, "dshsim-bench-ws-")
	policy := sandbox.Policy{Mode: sandbox.WorkspaceWrite, WorkspaceRoot: ws}
	runner, empty := benchBinaries(b)
	l := newLauncher(b)
	lr, err := NewWithOptions(Options{ReuseThreads: true})
	if err != nil {
		b.Fatal(err)
	}
	defer lr.Close()
	// A locked, unrestricted worker thread starting the command: the cost of
	// the thread handoff alone, without Landlock.
	handoff := make(chan chan error)
	var toStart *exec.Cmd
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		for done := range handoff {
			done <- toStart.Start()
		}
	}()
	defer close(handoff)
	type variant struct {
		name string
		fn   func() error
	}
	cmd := func(argv ...string) func() error {
		return func() error { return exec.Command(argv[0], argv[1:]...).Run() }
	}
	variants := []variant{
		{"bare", cmd("/bin/true")},
		{"inproc", func() error {
			c := exec.Command("/bin/true")
			if err := l.Start(c, policy); err != nil {
				return err
			}
			return c.Wait()
		}},
		{"bare-handoff", func() error {
			toStart = exec.Command("/bin/true")
			done := make(chan error)
			handoff <- done
			if err := <-done; err != nil {
				return err
			}
			return toStart.Wait()
		}},
		{"inproc-reuse", func() error {
			c := exec.Command("/bin/true")
			if err := lr.Start(c, policy); err != nil {
				return err
			}
			return c.Wait()
		}},
		{"runner-startup", cmd(empty)},
		{"runner-rules", func() error {
			// Start-up, ABI query, ruleset, restriction, then a failing exec: exit 125.
			err := exec.Command(runner, sandbox.Wrap(nil, sandbox.LandlockArgs(policy), []string{"/nonexistent/dshsim"})...).Run()
			var ee *exec.ExitError
			if errors.As(err, &ee) && ee.ExitCode() == 125 {
				return nil
			}
			return fmt.Errorf("rules-only run: %v", err)
		}},
		{"runner", cmd(sandbox.Wrap([]string{runner}, sandbox.LandlockArgs(policy), []string{"/bin/true"})...)},
		{"runner-naive", cmd(naiveBin, ws, "--", "/bin/true")},
	}
	if _, err := exec.LookPath("bwrap"); err == nil {
		variants = append(variants, variant{"bwrap", cmd(sandbox.Wrap([]string{"bwrap"}, sandbox.BwrapArgs(policy), []string{"/bin/true"})...)})
	}
	samples := make([][]time.Duration, len(variants))
	round := 0
	for b.Loop() {
		for k := range variants {
			i := (k + round) % len(variants)
			start := time.Now()
			if err := variants[i].fn(); err != nil {
				b.Fatalf("%s: %v", variants[i].name, err)
			}
			samples[i] = append(samples[i], time.Since(start))
		}
		round++
	}
	median := func(d []time.Duration) float64 {
		s := slices.Clone(d)
		slices.Sort(s)
		return float64(s[len(s)/2])
	}
	bare := median(samples[0])
	b.ReportMetric(bare/1e3, "bare-µs")
	for i, v := range variants[1:] {
		b.ReportMetric(median(samples[i+1])/bare, v.name+"-x")
	}
	if testing.Verbose() {
		for i, v := range variants {
			fmt.Printf("%-15s median %8.0f µs  ratio %.2fx  (%d samples)\n", v.name, median(samples[i])/1e3, median(samples[i])/bare, len(samples[i]))
		}
	}
}
