package scenarios

import (
	"bytes"
	"errors"
	"io/fs"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dshsim/dshsim/harness"
	"github.com/dshsim/dshsim/harness/replay/isolate"
	"github.com/dshsim/dshsim/harness/replay/recording"
	"github.com/dshsim/dshsim/sandbox/sandboxtest"
)

// tree is every file under dir (dotfiles included) by slash path.
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		out[filepath.ToSlash(rel)] = string(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// refreshRun is one dsh-replay -refresh of dir: started, signalled after
// delay (to its process group when group), waited for.
type refreshRun struct {
	exit           int // -1: ended by the signal itself
	stdout, stderr string
}

func runRefresh(t *testing.T, env []string, dir string, delay time.Duration, sig syscall.Signal, group bool) refreshRun {
	t.Helper()
	cmd := exec.Command("dsh-replay", "-refresh", dir) // the test binary as the command (testscript.Main put it in PATH)
	cmd.Env = env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // its own group, as a shell's job
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	var err error
	select {
	case err = <-exited:
	case <-time.After(delay):
		if group {
			syscall.Kill(-cmd.Process.Pid, sig) // a terminal's Ctrl-C: the command and its contained child
		} else {
			cmd.Process.Signal(sig)
		}
		select {
		case err = <-exited:
		case <-time.After(2 * time.Minute):
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			t.Fatalf("dsh-replay -refresh did not stop after %v", sig)
		}
	}
	r := refreshRun{stdout: stdout.String(), stderr: stderr.String()}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee) && ee.ExitCode() >= 0:
		r.exit = ee.ExitCode()
	case errors.As(err, &ee):
		r.exit = -1
	default:
		t.Fatal(err)
	}
	return r
}

// TestInterruptedRefreshLeavesOldOrNew interrupts a real dsh-replay
// -refresh with SIGINT at 50 points spread over a complete run (jittered),
// every other one to its whole process group as a terminal's Ctrl-C sends
// it, and checks each time that the recording's files are byte for byte
// either the old set or the set a complete refresh writes, with nothing else
// in the directory (no temporary, no journal), and that stderr says which.
// The recording (fs-read with its title in session.jsonl and
// projection.expected.json and its reply in stdout.expected.jsonl tampered
// with, so that a refresh rewrites all three) refreshes in about a second;
// -short interrupts it 10 times.
func TestInterruptedRefreshLeavesOldOrNew(t *testing.T) {
	isolate.Require(t)
	root := harness.Root(t)
	tmp, scratch := t.TempDir(), sandboxtest.TempDir(t, "dshsim-refresh-")
	env := append(os.Environ(), "TMPDIR="+tmp, sandboxtest.ScratchEnv+"="+scratch)
	orig := filepath.Join(t.TempDir(), "fs-read")
	if err := recording.CopyTree(filepath.Join(root, "transcripts", "fs-read"), orig); err != nil {
		t.Fatal(err)
	}
	// Tamper with what the stack writes in all three files a refresh
	// rewrites; a complete refresh restores each byte for byte (the title
	// event carries no message id that a refresh would make anew).
	for _, e := range []struct{ file, old, new string }{
		{recording.SessionFile, `"title":"Use the read tool`, `"title":"Tampered: use the read tool`},
		{recording.StdoutFile, `"text":"DONE"`, `"text":"DONE, as once recorded"`},
		{recording.ProjectionFile, `"title": "Use the read tool`, `"title": "Tampered: use the read tool`},
	} {
		path := filepath.Join(orig, e.file)
		data, err := os.ReadFile(path)
		if err != nil || !strings.Contains(string(data), e.old) {
			t.Fatalf("%s lacks %q (%v)", e.file, e.old, err)
		}
		harness.MustWrite(t, path, strings.Replace(string(data), e.old, e.new, 1))
	}
	oldSet := tree(t, orig)

	full := filepath.Join(t.TempDir(), "fs-read")
	if err := recording.CopyTree(orig, full); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if r := runRefresh(t, env, full, time.Hour, syscall.SIGINT, false); r.exit != 0 {
		t.Fatalf("a complete refresh: exit %d\n%s%s", r.exit, r.stdout, r.stderr)
	}
	whole := time.Since(start)
	newSet := tree(t, full)
	if !maps.Equal(newSet, tree(t, filepath.Join(root, "transcripts", "fs-read"))) {
		t.Fatal("a complete refresh does not restore fs-read as committed")
	}
	for _, f := range []string{recording.SessionFile, recording.StdoutFile, recording.ProjectionFile} {
		if oldSet[f] == newSet[f] {
			t.Fatalf("a complete refresh leaves %s as it was: the test needs it rewritten", f)
		}
	}

	n := 50
	if testing.Short() {
		n = 10
	}
	outcomes := map[string]int{}
	for i := range n {
		dir := filepath.Join(t.TempDir(), "fs-read")
		if err := recording.CopyTree(orig, dir); err != nil {
			t.Fatal(err)
		}
		// Spread over 1.3 complete runs: the first points fall before the
		// replay starts, the last after it ended.
		delay := time.Duration((float64(i) + rand.Float64()) / float64(n) * 1.3 * float64(whole))
		r := runRefresh(t, env, dir, delay, syscall.SIGINT, i%2 == 0)
		got := tree(t, dir)
		state := ""
		switch {
		case maps.Equal(got, oldSet):
			state = "old"
		case maps.Equal(got, newSet):
			state = "new"
		default:
			t.Fatalf("interrupt %d after %v (exit %d): the recording is neither the old set nor the new one: %v\n%s", i, delay, r.exit, changedFrom(oldSet, newSet, got), r.stderr)
		}
		switch {
		case r.exit == 0 && state != "new":
			t.Errorf("interrupt %d: exit 0 but the recording is the old set\n%s", i, r.stderr)
		case r.exit == 130 && state == "old" && !strings.Contains(r.stderr, "it was left as it was"):
			t.Errorf("interrupt %d: left as it was, but stderr says %q", i, r.stderr)
		case r.exit == 130 && state == "new" && !strings.Contains(r.stderr, "after refreshing fs-read whole"):
			t.Errorf("interrupt %d: refreshed whole, but stderr says %q", i, r.stderr)
		case r.exit != 0 && r.exit != 130 && r.exit != -1:
			t.Errorf("interrupt %d: exit %d\n%s", i, r.exit, r.stderr)
		}
		outcomes[map[int]string{0: "completed", 130: "interrupted", -1: "killed by the signal"}[r.exit]+", "+state]++
	}
	t.Logf("%d interrupts over a refresh of %v: %v", n, whole.Round(time.Millisecond), outcomes)
	if outcomes["interrupted, old"] == 0 {
		t.Errorf("no interrupt landed before the write: %v", outcomes)
	}
	if left := sandboxtest.Leftovers(tmp, scratch); len(left) > 0 {
		t.Errorf("left behind: %v", left)
	}
}

// changedFrom names the files of got that are neither old's nor new's.
func changedFrom(old, new, got map[string]string) []string {
	var out []string
	for f, v := range got {
		if v != old[f] && v != new[f] {
			out = append(out, f)
		}
	}
	for f := range old {
		if _, ok := got[f]; !ok {
			out = append(out, f+" (missing)")
		}
	}
	return out
}
