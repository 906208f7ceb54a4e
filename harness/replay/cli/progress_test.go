package cli

import (
	"bytes"
	"errors"
	"io"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/creack/pty"

	"github.com/dshsim/dshsim/harness/replay"
	"github.com/dshsim/dshsim/internal/waittest"
)

// twoRecordings is a run of two recordings, one at a time.
var twoRecordings = []string{"-parallel", "1", "../../../testdata/replay/flagged/changed-seed", "../../../transcripts/fs-write"}

// onTerminal runs dsh-replay with stderr a real terminal (a pty of the given
// columns) and returns its stdout and what the terminal received.
func onTerminal(t *testing.T, columns uint16, after time.Duration, args []string) (stdout, screen string) {
	t.Helper()
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pseudo-terminal here: %v", err)
	}
	defer ptmx.Close()
	if err := pty.Setsize(tty, &pty.Winsize{Rows: 24, Cols: columns}); err != nil {
		t.Fatal(err)
	}
	got := make(chan []byte)
	go func() {
		b, err := io.ReadAll(ptmx)
		if err != nil && !errors.Is(err, syscall.EIO) { // EIO: the terminal's last holder closed it
			t.Errorf("reading the terminal: %v", err)
		}
		got <- b
	}()
	var out bytes.Buffer
	runMain(&options{stdout: &out, stderr: tty, progressAfter: after}, args)
	tty.Close()
	return out.String(), string(waittest.Recv(t, got, "the terminal's reader to end"))
}

// TestProgressOnATerminal: on a terminal, a run shows one self-rewriting
// line on stderr (recordings done of total, the one replaying), cut to the
// terminal's width (40 columns here), and clears it before the report; the report on stdout
// is the same as without a terminal.
func TestProgressOnATerminal(t *testing.T) {
	stdout, screen := onTerminal(t, 40, 0, twoRecordings)
	if !strings.HasSuffix(stdout, "FAIL: 2 recordings: 1 match, 1 mismatch, 0 error\n") {
		t.Errorf("report:\n%s", stdout)
	}
	if strings.Contains(screen, "\n") {
		t.Errorf("progress wrote a new line on the terminal: %q", screen)
	}
	if !strings.HasSuffix(screen, "\r\033[K") {
		t.Errorf("the progress line is left on the terminal: %q", screen)
	}
	lines := strings.Split(strings.TrimSuffix(screen, "\r\033[K"), "\r\033[K")
	for _, want := range []string{"dsh-replay: 0/2 done, replaying change…", "dsh-replay: 1/2 done, replaying fs-wri…", "dsh-replay: 2/2 done"} {
		found := false
		for _, l := range lines {
			found = found || l == want
		}
		if !found {
			t.Errorf("the terminal never showed %q: %q", want, screen)
		}
	}
	for _, l := range lines {
		if utf8.RuneCountInString(l) >= 40 {
			t.Errorf("line %q is as wide as the terminal", l)
		}
	}
}

// TestNoProgressOnAShortRun: a run that ends before its delay shows nothing
// of its progress, even on a terminal.
func TestNoProgressOnAShortRun(t *testing.T) {
	stdout, screen := onTerminal(t, 80, time.Hour, twoRecordings)
	if screen != "" || !strings.Contains(stdout, "FAIL: 2 recordings") {
		t.Errorf("terminal %q, report:\n%s", screen, stdout)
	}
}

// TestNoProgressWhenNotATerminal: with stderr a pipe, nothing of the
// progress is written, however long the run.
func TestNoProgressWhenNotATerminal(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	got := make(chan []byte)
	go func() {
		b, _ := io.ReadAll(r)
		got <- b
	}()
	var out bytes.Buffer
	runMain(&options{stdout: &out, stderr: w, progressAfter: 0}, twoRecordings)
	w.Close()
	if b := waittest.Recv(t, got, "stderr's reader to end"); len(b) != 0 || !strings.Contains(out.String(), "FAIL: 2 recordings") {
		t.Errorf("stderr (a pipe) got %q; report:\n%s", b, out.String())
	}
}

// TestProgressAroundReplayOutput: what a replay writes to stderr goes out on
// lines of its own, the progress line cleared before it and redrawn after a
// whole line, not after a part of one; after stop nothing is drawn.
func TestProgressAroundReplayOutput(t *testing.T) {
	var b bytes.Buffer
	p := newProgress(&b, func() int { return 80 }, 3, 0)
	p.started("dir/a")
	io.WriteString(p, "warn: one\n")
	io.WriteString(p, "warn: par")
	p.finished(1, 3, &replay.Result{Name: "a"})
	io.WriteString(p, "tial\n")
	p.stop()
	p.started("dir/b")
	const clr = "\r\033[K"
	want := clr + "dsh-replay: 0/3 done, replaying a" +
		clr + "warn: one\n" + clr + "dsh-replay: 0/3 done, replaying a" +
		clr + "warn: par" + "tial\n" + clr + "dsh-replay: 1/3 done" +
		clr
	if b.String() != want {
		t.Errorf("terminal got\n%q\nwant\n%q", b.String(), want)
	}
}

// TestProgressWaitsForItsDelay: nothing is drawn before the delay; at the
// delay the line appears without another event.
func TestProgressWaitsForItsDelay(t *testing.T) {
	var b bytes.Buffer
	p := newProgress(&b, func() int { return 80 }, 2, 50*time.Millisecond)
	defer p.stop()
	screen := func() string { // every write to b is made under p.mu
		p.mu.Lock()
		defer p.mu.Unlock()
		return b.String()
	}
	p.started("a")
	if s := screen(); s != "" {
		t.Fatalf("drawn before the delay: %q", s)
	}
	deadline := time.Now().Add(10 * time.Second)
	for screen() == "" && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if s := screen(); s != "\r\033[Kdsh-replay: 0/2 done, replaying a" {
		t.Errorf("after the delay: %q", s)
	}
}

// TestFit: a progress line is cut to fewer runes than the terminal has
// columns (a line as wide as the terminal wraps on some terminals, and a
// wrapped line cannot be rewritten in place).
func TestFit(t *testing.T) {
	tests := []struct {
		line    string
		columns int
		want    string
	}{
		{"abcdef", 7, "abcdef"},
		{"abcdef", 6, "abcd…"},
		{"abcdef", 2, "…"},
		{"abcdef", 1, ""},
		{"äöüäöü", 6, "äöüä…"},
		{strings.Repeat("x", 79), 0, strings.Repeat("x", 79)},
		{strings.Repeat("x", 80), 0, strings.Repeat("x", 78) + "…"},
	}
	for _, tc := range tests {
		if got := fit(tc.line, tc.columns); got != tc.want {
			t.Errorf("fit(%q, %d) = %q, want %q", tc.line, tc.columns, got, tc.want)
		}
	}
}
