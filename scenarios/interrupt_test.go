package scenarios

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/dshsim/dshsim/harness"
	"github.com/dshsim/dshsim/sandbox/sandboxtest"
)

// TestInterruptedCommandsCleanUp: dsh-sim and dsh-replay interrupted by
// SIGINT or SIGTERM while they work stop, exit 128+signal, say so, and leave
// nothing in their TMPDIR or scratch root. (kernel-matrix has its own test in
// harness/kernels.)
func TestInterruptedCommandsCleanUp(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the sims and replays; not in -short")
	}
	root := harness.Root(t)
	cases := []struct {
		name string
		sig  syscall.Signal
		args []string
		// busy says the command is in the middle of its work: something of
		// its own exists in its TMPDIR or scratch root, or its progress
		// line says it is.
		busy    func(tmp, scratch, stderr string) bool
		message string
		// tty gives the command a terminal as stderr, where its progress
		// shows.
		tty bool
	}{
		{"dsh-sim SIGINT while the sandbox sim runs", syscall.SIGINT, []string{"dsh-sim", "-root", root, "-o", "OUT/snap"},
			func(_, scratch, _ string) bool { return len(sandboxtest.Leftovers(scratch)) > 0 },
			"dsh-sim: interrupted (interrupt): stopped after the running sim, its temporary files removed", false},
		{"dsh-sim SIGTERM while a sim has a temporary directory", syscall.SIGTERM, []string{"dsh-sim", "-root", root, "-check"},
			func(tmp, _, _ string) bool { return len(sandboxtest.Leftovers(tmp)) > 0 },
			"dsh-sim: interrupted (terminated): stopped after the running sim, its temporary files removed", false},
		{"dsh-replay SIGTERM while recordings replay", syscall.SIGTERM,
			// Every recording twice: a run long enough that its progress
			// shows (after two seconds) well before it ends.
			[]string{"dsh-replay", "-parallel", "1", filepath.Join(root, "transcripts"), filepath.Join(root, "transcripts")},
			// Each replay's workspace lies in its own private /tmp, out of
			// sight: busy once the terminal shows a recording done.
			func(_, _, stderr string) bool { return replayDone.MatchString(stderr) },
			"dsh-replay: interrupted (terminated): replays stopped, their workspaces removed", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tmp, scratch, out := t.TempDir(), sandboxtest.TempDir(t, "dshsim-interrupt-"), t.TempDir()
			args := make([]string, len(tc.args))
			for i, a := range tc.args {
				args[i] = strings.ReplaceAll(a, "OUT", out)
			}
			cmd := exec.Command(args[0], args[1:]...) // the test binary as the command (testscript.Main put it in PATH)
			cmd.Dir = root
			cmd.Env = append(os.Environ(), "TMPDIR="+tmp, sandboxtest.ScratchEnv+"="+scratch)
			var stdout, stderr lockedBuffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			copied := make(chan struct{})
			if tc.tty {
				ptmx, tty, err := pty.Open()
				if err != nil {
					t.Skipf("no pseudo-terminal here: %v", err)
				}
				defer ptmx.Close()
				cmd.Stderr = tty
				go func() {
					io.Copy(&stderr, ptmx) // until the command, the terminal's last holder, exits (EIO)
					close(copied)
				}()
				defer tty.Close()
			} else {
				close(copied)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			if f, ok := cmd.Stderr.(*os.File); ok {
				f.Close() // the command holds the terminal now
			}
			exited := make(chan error, 1)
			go func() {
				err := cmd.Wait()
				<-copied
				exited <- err
			}()
			for deadline := time.Now().Add(2 * time.Minute); !tc.busy(tmp, scratch, stderr.String()); {
				select {
				case err := <-exited:
					t.Fatalf("%s ended before it was busy: %v\n%s%s", args[0], err, stdout.String(), stderr.String())
				case <-time.After(5 * time.Millisecond):
				}
				if time.Now().After(deadline) {
					cmd.Process.Kill()
					t.Fatalf("%s never got busy", args[0])
				}
			}
			if err := cmd.Process.Signal(tc.sig); err != nil {
				t.Fatal(err)
			}
			err := <-exited
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 128+int(tc.sig) {
				t.Errorf("exit %v, want status %d\n%s%s", err, 128+int(tc.sig), stdout.String(), stderr.String())
			}
			if !strings.Contains(stderr.String(), tc.message) {
				t.Errorf("stderr lacks %q:\n%s", tc.message, stderr.String())
			}
			if left := sandboxtest.Leftovers(tmp, scratch); len(left) > 0 {
				t.Errorf("left behind: %v", left)
			}
		})
	}
}

// replayDone is dsh-replay's progress line once a recording is done.
var replayDone = regexp.MustCompile(`dsh-replay: [1-9][0-9]*/[0-9]+ done`)

// lockedBuffer is a bytes.Buffer that a command's output copier writes while
// the test reads it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
