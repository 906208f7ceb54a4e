package isolate_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dshsim/dshsim/harness/replay/hostile"
	"github.com/dshsim/dshsim/harness/replay/isolate"
	"github.com/dshsim/dshsim/internal/waittest"
	"github.com/dshsim/dshsim/sandbox/sandboxtest"
)

func init() {
	isolate.Serve("test-exec", execCommand)
	isolate.Serve("test-bound", crossBound)
}

// execCommand runs the argv it is given, unconfined (as a recording's
// command runs under danger-full-access), and answers with its output and
// how it ended.
func execCommand(ctx context.Context, req []byte) ([]byte, error) {
	var argv []string
	if err := json.Unmarshal(req, &argv); err != nil {
		return nil, err
	}
	out, err := exec.CommandContext(ctx, argv[0], argv[1:]...).CombinedOutput()
	return []byte(fmt.Sprintf("%s\nexit: %v\n", out, err)), nil
}

// held keeps what allocate allocates.
var held [][]byte

// allocate allocates (and touches) 1 GiB, 16 MiB at a time.
func allocate() int {
	for range 64 {
		b := make([]byte, 16<<20)
		for i := range b {
			b[i] = 1
		}
		held = append(held, b)
	}
	return len(held)
}

// allocateEnv makes this test binary a command that allocates 1 GiB
// (TestMain).
const allocateEnv = "DSHSIM_ISOLATE_TEST_ALLOCATE"

// crossBound goes past a bound: in the run stage itself, "memory"
// allocates 1 GiB, "file" writes a 2 MiB file, "cpu" spins; in a command
// it starts, "command-memory" allocates 1 GiB, and "processes" starts
// sleeping processes until one cannot be started (then kills them).
func crossBound(_ context.Context, req []byte) ([]byte, error) {
	switch string(req) {
	case "memory":
		return []byte(strconv.Itoa(allocate())), nil
	case "file":
		return nil, os.WriteFile("/tmp/big", make([]byte, 2<<20), 0o644)
	case "cpu":
		for n := 0; ; n++ {
			if n < 0 {
				return nil, nil
			}
		}
	case "command-memory":
		cmd := exec.Command("/proc/self/exe")
		cmd.Env = append(os.Environ(), allocateEnv+"=1")
		out, err := cmd.CombinedOutput()
		return []byte(fmt.Sprintf("%s\nexit: %v\n", firstLines(string(out), 3), err)), nil
	case "processes":
		var started []*exec.Cmd
		var err error
		for len(started) < 200 && err == nil {
			cmd := exec.Command("sleep", "30")
			if err = cmd.Start(); err == nil {
				started = append(started, cmd)
			}
		}
		for _, cmd := range started {
			cmd.Process.Kill()
			cmd.Wait()
		}
		return []byte(fmt.Sprintf("started %d: %v", len(started), err)), nil
	}
	return nil, fmt.Errorf("no bound %q", req)
}

func firstLines(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	return strings.Join(lines[:min(n, len(lines))], "\n")
}

// runIn runs argv in a contained child with opt (the shares given) and
// returns what it answered.
func runIn(t *testing.T, opt isolate.Options, argv ...string) (string, error) {
	t.Helper()
	req, _ := json.Marshal(argv)
	if opt.Stderr == nil {
		opt.Stderr = io.Discard
	}
	var out []byte
	err := waittest.Call(t, "the contained child to answer", func() (err error) {
		out, err = isolate.Run(context.Background(), "test-exec", req, opt)
		return err
	})
	return string(out), err
}

// TestRunStageIsOutOfReach: a command the run stage starts, unconfined and
// with the run stage's own uid, attacks the run stage (the process that
// produces the run's answer) and PID 1 (which passes it on), every thread
// of each: PTRACE_ATTACH and PTRACE_SEIZE, process_vm_readv and writev,
// /proc/<pid>/mem opened for writing, /proc/<pid>/environ, and every
// /proc/<pid>/fd/<n> opened for writing (the response descriptor among
// them). Every attempt is blocked: the run stage is undumpable and nothing
// of the run holds CAP_SYS_PTRACE.
func TestRunStageIsOutOfReach(t *testing.T) {
	isolate.Require(t)
	bin := hostile.Program(t)
	out, err := runIn(t, isolate.Options{Share: []string{bin}}, bin)
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`attack-done (\d+) targets`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("the attack did not run to its end:\n%s", out)
	}
	if n, _ := strconv.Atoi(m[1]); n < 3 {
		t.Errorf("the attack found %d targets, want PID 1 and every thread of the run stage:\n%s", n, out)
	}
	for _, what := range []string{"ptrace-attach", "ptrace-seize", "process_vm_readv", "process_vm_writev", "mem", "environ", "fd"} {
		if !regexp.MustCompile(`(?m)^attack 1 ` + what + `.*: blocked`).MatchString(out) {
			t.Errorf("no blocked %s of PID 1 in:\n%s", what, out)
		}
	}
	for line := range strings.Lines(out) {
		if strings.Contains(line, "REACHED") {
			t.Errorf("the command reached the run: %s", strings.TrimSpace(line))
		}
	}
}

// TestStoppedOrKilledRunStageIsAnError: a command signals the run stage,
// as one with its uid may: stopped (SIGSTOP), it is killed and the run is
// an error at once (a stopped run stage would hold the host forever);
// killed, the run is an error. Neither is ever an answer.
func TestStoppedOrKilledRunStageIsAnError(t *testing.T) {
	isolate.Require(t)
	for sig, want := range map[string]string{
		"STOP": "isolate: the run stage was stopped (stopped (signal)) and killed: something it ran signalled it before it answered",
		"KILL": "isolate: the run stage was killed (killed) before it answered",
	} {
		t.Run(sig, func(t *testing.T) {
			start := time.Now()
			out, err := runIn(t, isolate.Options{}, "sh", "-c", "kill -"+sig+" $PPID; sleep 20; echo answered")
			if err == nil || err.Error() != want {
				t.Fatalf("answer %q, error %v; want the error %q", out, err, want)
			}
			if d := time.Since(start); d > 15*time.Second {
				t.Errorf("the run took %v to end", d)
			}
		})
	}
}

// testBounds are the bounds the bound tests run under.
var testBounds = isolate.Bounds{Memory: isolate.MinMemory, Tasks: 64, FileSize: 1 << 20, CPU: time.Second}

// TestRunStageBounds: a run stage stopped by a bound says which: the run
// stage allocating 1 GiB past a memory bound of 256 MiB, spinning past a
// CPU time bound of 1 s; one writing 2 MiB past a file size bound of 1 MiB
// gets an error saying so.
func TestRunStageBounds(t *testing.T) {
	isolate.Require(t)
	skipUnderRace(t)
	for what, want := range map[string]string{
		"memory": "it reached its memory bound 256 MiB per process",
		"file":   "file too large",
		"cpu":    "it reached its CPU time bound 1s per process",
	} {
		t.Run(what, func(t *testing.T) {
			t.Parallel()
			out, err := crossIn(t, testBounds, what)
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Fatalf("answer %q, error %v; want %q", out, err, want)
			}
		})
	}
}

// TestCommandBounds: a command going past a bound fails while the run goes
// on: allocating past the memory bound, starting processes past the
// process bound (which counts the run's processes and threads alone),
// writing past the file size bound, spinning past the CPU time bound.
func TestCommandBounds(t *testing.T) {
	isolate.Require(t)
	skipUnderRace(t)
	for what, want := range map[string]*regexp.Regexp{
		"command-memory": regexp.MustCompile(`(out of memory|cannot allocate memory|SIGSEGV)(.|\n)*exit: exit status 2`),
		"processes":      regexp.MustCompile(`^started ([0-9]|[1-5][0-9]): fork/exec /usr/bin/sleep: resource temporarily unavailable$`),
	} {
		t.Run(what, func(t *testing.T) {
			t.Parallel()
			out, err := crossIn(t, testBounds, what)
			if err != nil || !want.Match(out) {
				t.Fatalf("answer %q, error %v; want %v", out, err, want)
			}
		})
	}
	for what, script := range map[string]string{
		"file": `head -c 2000000 /dev/zero > /tmp/big; wc -c < /tmp/big`,
		"cpu":  `while :; do :; done`,
	} {
		t.Run(what, func(t *testing.T) {
			t.Parallel()
			out, err := runIn(t, isolate.Options{Bounds: testBounds}, "bash", "-c", script)
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]string{"file": "File size limit exceeded", "cpu": "exit: signal: CPU time limit exceeded"}[what]
			if !strings.Contains(out, want) || what == "file" && !strings.Contains(out, "\n1048576\n") {
				t.Errorf("output lacks %q (and 1048576 bytes written, for the file):\n%s", want, out)
			}
		})
	}
}

// skipUnderRace skips t in a -race build: the race detector's shadow
// memory alone is past the bounds these tests set (make test runs them).
func skipUnderRace(t *testing.T) {
	t.Helper()
	if raceDetector {
		t.Skip("-race: the race detector's shadow memory counts against a memory bound of 256 MiB (make test runs this)")
	}
}

// crossIn runs crossBound(what) in a child bounded by b.
func crossIn(t *testing.T, b isolate.Bounds, what string) (out []byte, err error) {
	t.Helper()
	err = waittest.Call(t, "the bounded child to end", func() (err error) {
		out, err = isolate.Run(context.Background(), "test-bound", []byte(what), isolate.Options{Bounds: b, Stderr: io.Discard})
		return err
	})
	return out, err
}

// TestBoundsAreChecked: a bound below what the run stage needs is refused
// before anything starts.
func TestBoundsAreChecked(t *testing.T) {
	_, err := isolate.Run(context.Background(), "test-exec", []byte(`["true"]`), isolate.Options{Bounds: isolate.Bounds{Memory: 1 << 20}})
	if err == nil || !strings.Contains(err.Error(), "a memory bound (-memory) of 1 MiB: want at least 256 MiB") {
		t.Fatalf("err = %v", err)
	}
}

// TestRootRunHoldsNoPrivilege: run by root, the run runs as nobody with no
// privilege over any host file: a file of root's, mode 0600, in a shared
// directory cannot be read, nor written though the directory may be.
func TestRootRunHoldsNoPrivilege(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root: checks what a replay run by root may do")
	}
	isolate.Require(t)
	dir := sharedDir(t)
	secret := filepath.Join(dir, "root-only")
	if err := os.WriteFile(secret, []byte("secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := runIn(t, isolate.Options{Share: []string{dir}}, "sh", "-c", "id -u; cat "+secret+"; echo x >> "+secret)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out, "65534\n") || strings.Contains(out, "secret") || strings.Count(out, "Permission denied") != 2 && !strings.Contains(out, "Read-only") {
		t.Errorf("root's run read or wrote a root-only file:\n%s", out)
	}
}

// TestShareRootCannotReadIsRefused: run by root, a shared directory only
// root may read is refused before anything starts, naming it.
func TestShareRootCannotReadIsRefused(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root: checks what a replay run by root may read")
	}
	dir := sandboxtest.TempDir(t, "dshsim-private-")
	if err := os.Chmod(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	_, err := isolate.Run(context.Background(), "test-exec", []byte(`["true"]`), isolate.Options{Share: []string{dir}})
	if err == nil || !strings.Contains(err.Error(), "share "+dir+": mode 0700, owner 0: run by root, the child runs as uid 65534") {
		t.Fatalf("err = %v", err)
	}
}
