package replay_test

import (
	"context"
	"crypto/rand"
	"errors"
	"net"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/dshsim/dshsim/harness/replay"
	"github.com/dshsim/dshsim/harness/replay/hostile"
	"github.com/dshsim/dshsim/harness/replay/isolate"
	"github.com/dshsim/dshsim/sandbox/procfs"
	"github.com/dshsim/dshsim/sandbox/sandboxtest"
)

// TestHostileRecordingLeavesNothingOnTheHost: every hostile copy of an
// upstream recording (package hostile: hooks, bash calls, file tool calls
// through absolute paths, ../ and links, a run_code program, a runner of
// its own, processes left behind, a seed past its bounds, under
// danger-full-access stated or self-approved; and the ones that attack the
// replay's own processes: tracing, reading and writing the memory and
// descriptors of its run stage and PID 1, stopping or killing its run
// stage) runs its attack to its end, is refused before anything runs, or
// ends the replay in an error, and nothing reaches the host or the replay:
// the directory and /dev/shm directory stay empty, the file keeps its
// content, the listener on the host's loopback is never reached, no
// process the replay started is left, and no attack on the run reaches
// it. The escape corpus runs the host-directed copies and checks the host
// with its snapshots (snapshots/escape.txt).
func TestHostileRecordingLeavesNothingOnTheHost(t *testing.T) {
	isolate.Require(t)
	t.Parallel() // its targets are its own: nothing another test writes is checked
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	mark := "DSHSIM_HOSTILE_TEST=" + rand.Text()
	program := hostile.Program(t)
	for _, c := range append(hostile.Cases(), hostile.RunCases()...) {
		t.Run(c.Name, func(t *testing.T) {
			tgt := target(t, c, ln.Addr().(*net.TCPAddr).Port, mark)
			tgt.Program = program
			dir := filepath.Join(t.TempDir(), c.Base)
			if err := c.Make(filepath.Join(root, "transcripts"), dir, tgt); err != nil {
				t.Fatal(err)
			}
			r := replay.Replay(context.Background(), dir, replay.Options{LauncherPath: sandboxtest.Runner(t)})
			claims, err := c.Check(r)
			if err != nil {
				t.Error(err) // the host is still checked: what got through says more
			}
			for _, claim := range claims {
				t.Error(claim)
			}
			time.Sleep(c.Settle)
			for _, left := range sandboxtest.Leftovers(tgt.Dir) {
				t.Errorf("the hostile recording wrote %s on the host", left)
			}
			if tgt.Shm != "" {
				for _, left := range sandboxtest.Leftovers(tgt.Shm) {
					t.Errorf("the hostile recording wrote %s on the host", left)
				}
			}
			if data, err := os.ReadFile(tgt.File); err != nil || string(data) != "original\n" {
				t.Errorf("the hostile recording changed %s on the host: %q, %v", tgt.File, data, err)
			}
		})
	}
	if err := ln.(*net.TCPListener).SetDeadline(time.Now().Add(100 * time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	if c, err := ln.Accept(); err == nil {
		c.Close()
		t.Error("a hostile recording connected to the host's loopback")
	} else if ne := (net.Error)(nil); !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatal(err)
	}
	for _, pid := range marked(mark) {
		t.Errorf("process %d, started by a hostile recording, outlived its replay", pid)
	}
}

// target is a fresh target of case c on the host: a directory and a file
// holding "original" (under the host's /tmp for a case that attacks it,
// else in the scratch root), a /dev/shm directory for a case that attacks
// it, all writable by everyone.
func target(t *testing.T, c hostile.Case, port int, mark string) hostile.Target {
	t.Helper()
	var base string
	if c.UnderTmp {
		d, err := os.MkdirTemp("/tmp", "dshsim-hostile-")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(d) })
		base = d
	} else {
		base = sandboxtest.TempDir(t, "dshsim-hostile-")
	}
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	tgt := hostile.Target{Dir: filepath.Join(base, "out"), File: filepath.Join(base, "target"), Port: port, Mark: mark}
	if err := os.Mkdir(tgt.Dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(tgt.File, []byte("original\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if c.Shm {
		d, err := os.MkdirTemp("/dev/shm", "dshsim-hostile-")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(d) })
		tgt.Shm = d
	}
	if err := tgt.Expose(); err != nil {
		t.Fatal(err)
	}
	return tgt
}

// marked are the live processes whose environment holds mark (killed).
func marked(mark string) []int {
	procs, _ := procfs.Proc.All()
	var out []int
	for _, p := range procs {
		if p.Ended() {
			continue
		}
		if env, err := procfs.Proc.Environ(p.PID); err == nil && slices.Contains(env, mark) {
			out = append(out, p.PID)
			syscall.Kill(p.PID, syscall.SIGKILL)
		}
	}
	return out
}
