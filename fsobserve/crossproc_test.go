package fsobserve

import (
	"bufio"
	"context"
	"os/exec"
	"testing"
	"time"
)

// TestLockAcrossProcesses: another process (util-linux flock(1)) holds the
// directory lock; our write waits and gives up when its context ends,
// leaving the file alone; once that process exits the write goes through.
func TestLockAcrossProcesses(t *testing.T) {
	bin, err := exec.LookPath("flock")
	if err != nil {
		t.Skip("flock(1) not installed; TestDirectoryFlock covers the lock in-process")
	}
	dir, l, p := localWithFile(t, "f", "old")
	cmd := exec.Command(bin, "-x", dir, "sh", "-c", "echo locked; cat >/dev/null")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	if line, err := bufio.NewReader(stdout).ReadString('\n'); err != nil || line != "locked\n" {
		t.Fatalf("flock child: %q %v", line, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err = l.WriteText(ctx, resolve(t, l, "f"), "new", WriteIntent{})
	wantCode(t, err, CodeAborted, "write aborted")
	wantContent(t, p, "old")
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	if _, err := l.WriteText(context.Background(), resolve(t, l, "f"), "new", WriteIntent{}); err != nil {
		t.Fatal(err)
	}
	wantContent(t, p, "new")
}
