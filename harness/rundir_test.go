package harness

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dshsim/dshsim/internal/waittest"
)

// holdEnv makes this test binary hold a run directory under the parent it
// names, print the directory, and sleep until it is killed: a run that dies
// without removing what it made.
const holdEnv = "DSHSIM_HARNESS_HOLD_RUN_DIR"

func TestMain(m *testing.M) {
	if parent := os.Getenv(holdEnv); parent != "" {
		dir, _, err := MkdirRun(parent, "held")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Println(dir)
		time.Sleep(time.Hour)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// holder starts a process that holds a run directory under parent and
// returns it with the directory.
func holder(t *testing.T, parent string) (*exec.Cmd, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), holdEnv+"="+parent)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line := waittest.Call(t, "the holder to print its run directory", func() string {
		b := make([]byte, 4096)
		n, _ := out.Read(b)
		return string(b[:n])
	})
	dir := strings.TrimSpace(line)
	if !strings.HasPrefix(dir, filepath.Join(parent, RunDirPrefix+"held-")) {
		t.Fatalf("the holder printed %q", line)
	}
	return cmd, dir
}

// TestMkdirRun: a run directory is private, named for its run, with its
// lock file beside it; release removes both, and everything in the
// directory, a read-only directory included.
func TestMkdirRun(t *testing.T) {
	parent := t.TempDir()
	dir, release, err := MkdirRun(parent, "alpha")
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(dir)
	if err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 || !strings.HasPrefix(filepath.Base(dir), "dshsim-run-alpha-") || filepath.Dir(dir) != parent {
		t.Fatalf("%s: %v %v; want a 0700 directory dshsim-run-alpha-* in %s", dir, fi, err, parent)
	}
	if fi, err := os.Lstat(dir + lockSuffix); err != nil || !fi.Mode().IsRegular() {
		t.Fatalf("its lock file: %v %v", fi, err)
	}
	MustWrite(t, filepath.Join(dir, "ws", "ro", "f"), "x")
	if err := os.Chmod(filepath.Join(dir, "ws", "ro"), 0o500); err != nil {
		t.Fatal(err)
	}
	release()
	if ents, _ := os.ReadDir(parent); len(ents) != 0 {
		t.Fatalf("after release: %v, want the directory and its lock file gone", ents)
	}
}

// TestRemoveDeadRuns: only dead runs' directories of this user go, with
// their lock files: a killed process's run directory is removed; a live
// process's, this process's own, a directory without a lock file, a
// directory of another name, a lock file that is a symlink and a lock file
// beside a plain file stay.
func TestRemoveDeadRuns(t *testing.T) {
	parent, other := t.TempDir(), t.TempDir()
	killed, dead := holder(t, parent)
	_, live := holder(t, parent)
	mine, release, err := MkdirRun(parent, "mine")
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	if err := killed.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	waittest.Exit(t, killed, "the killed holder")
	MustWrite(t, filepath.Join(dead, "ws", "a.txt"), "left behind")
	noLock := filepath.Join(parent, RunDirPrefix+"nolock")
	unrelated := filepath.Join(parent, "dshsim-sandbox-1234")
	for _, d := range []string{noLock, unrelated} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	MustWrite(t, filepath.Join(other, "free.lock"), "")
	link := filepath.Join(parent, RunDirPrefix+"link"+lockSuffix)
	if err := os.Symlink(filepath.Join(other, "free.lock"), link); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(strings.TrimSuffix(link, lockSuffix), 0o700); err != nil {
		t.Fatal(err)
	}
	plain := filepath.Join(parent, RunDirPrefix+"file")
	MustWrite(t, plain, "not a directory")
	MustWrite(t, plain+lockSuffix, "")

	removed, err := RemoveDeadRuns(parent, filepath.Join(parent, "missing"))
	if err != nil || !slices.Equal(removed, []string{dead}) {
		t.Fatalf("RemoveDeadRuns = %v, %v; want [%s]", removed, err, dead)
	}
	for _, p := range []string{dead, dead + lockSuffix} {
		if _, err := os.Lstat(p); !os.IsNotExist(err) {
			t.Errorf("the killed run's %s: %v, want it gone", p, err)
		}
	}
	for _, p := range []string{live, live + lockSuffix, mine, mine + lockSuffix, noLock, unrelated, link, strings.TrimSuffix(link, lockSuffix), plain, plain + lockSuffix} {
		if _, err := os.Lstat(p); err != nil {
			t.Errorf("%s: %v, want it kept", p, err)
		}
	}
}

// TestRemoveDeadRunsSparesOtherUsers: run as root, a dead run's directory
// and lock file that uid 65534 owns are not root's to remove.
func TestRemoveDeadRunsSparesOtherUsers(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root (CAP_CHOWN) to give a directory to another user")
	}
	parent := t.TempDir()
	theirs := filepath.Join(parent, RunDirPrefix+"theirs")
	if err := os.Mkdir(theirs, 0o700); err != nil {
		t.Fatal(err)
	}
	MustWrite(t, theirs+lockSuffix, "")
	for _, p := range []string{theirs, theirs + lockSuffix} {
		if err := os.Chown(p, 65534, 65534); err != nil {
			t.Fatal(err)
		}
	}
	removed, err := RemoveDeadRuns(parent)
	if err != nil || len(removed) != 0 {
		t.Fatalf("RemoveDeadRuns = %v, %v; want nothing removed", removed, err)
	}
	if _, err := os.Lstat(theirs); err != nil {
		t.Fatalf("another user's %s: %v", theirs, err)
	}
}

// TestRemoveDeadRunsRacesMkdirRun: a removal running while runs make their
// directories never takes one a run holds: each run finds its directory and
// its lock file in place (a lock file the removal took between its creation
// and its flock is made again), and everything is gone once released.
func TestRemoveDeadRunsRacesMkdirRun(t *testing.T) {
	parent := t.TempDir()
	stop := make(chan struct{})
	var removal sync.WaitGroup
	removal.Add(1)
	go func() {
		defer removal.Done()
		for {
			select {
			case <-stop:
				return
			default:
				RemoveDeadRuns(parent)
			}
		}
	}()
	var runs sync.WaitGroup
	for w := range 4 {
		runs.Add(1)
		go func() {
			defer runs.Done()
			for i := range 200 {
				dir, release, err := MkdirRun(parent, fmt.Sprintf("w%d", w))
				if err != nil {
					t.Error(err)
					return
				}
				if _, err := os.Lstat(dir + lockSuffix); err != nil {
					t.Errorf("run %d.%d: its lock file: %v", w, i, err)
				}
				path := filepath.Join(dir, "f")
				if err := os.WriteFile(path, []byte("x"), 0o600); err != nil {
					t.Errorf("run %d.%d: %v: the held directory was removed", w, i, err)
				}
				if _, err := os.Stat(path); err != nil {
					t.Errorf("run %d.%d: %v: the held directory was removed", w, i, err)
				}
				release()
			}
		}()
	}
	waittest.Group(t, &runs, "the runs making and releasing directories")
	close(stop)
	waittest.Group(t, &removal, "the removal loop")
	if ents, _ := os.ReadDir(parent); len(ents) != 0 {
		t.Errorf("left behind: %v", ents)
	}
}
