package procfs

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/dshsim/dshsim/harness"
)

// tail is the rest of a real stat line after the session field: tty_nr
// through stime (utime 1417, stime 93), then fields nobody reads.
const tail = " 0 -1 4194560 2264 0 0 0 1417 93 0 0 20 0 1 0 4410 8515584 1003"

func TestParseStat(t *testing.T) {
	tests := []struct {
		name, line string
		want       Stat
		wantErr    string
	}{
		{name: "plain", line: "42 (bash) S 1 42 42" + tail + "\n",
			want: Stat{PID: 42, Comm: "bash", State: 'S', PPID: 1, PGrp: 42, Session: 42, UTime: 1417, STime: 93}},
		{name: "comm holds spaces and parentheses: it ends at the line's last ')'", line: "7 (a) b (c)) R 3 5 6" + tail,
			want: Stat{PID: 7, Comm: "a) b (c)", State: 'R', PPID: 3, PGrp: 5, Session: 6, UTime: 1417, STime: 93}},
		{name: "comm that looks like fields", line: "8 (x) Z 1 2 3 4 5) Z 9 8 7" + tail,
			want: Stat{PID: 8, Comm: "x) Z 1 2 3 4 5", State: 'Z', PPID: 9, PGrp: 8, Session: 7, UTime: 1417, STime: 93}},
		{name: "empty comm", line: "5 () S 1 5 5" + tail,
			want: Stat{PID: 5, Comm: "", State: 'S', PPID: 1, PGrp: 5, Session: 5, UTime: 1417, STime: 93}},
		{name: "no comm", line: "9 bash S 1 9 9" + tail, wantErr: "no (comm) field"},
		{name: "only a closing parenthesis", line: "9 bash) S 1 9 9" + tail, wantErr: "no (comm) field"},
		{name: "pid not a number", line: "x (bash) S 1 9 9" + tail, wantErr: `field pid: "x " is not a process id followed by one space`},
		{name: "pid zero", line: "0 (bash) S 1 9 9" + tail, wantErr: `field pid: "0 " is not a process id followed by one space`},
		{name: "pid without its space", line: "9(bash) S 1 9 9" + tail, wantErr: `field pid: "9" is not a process id followed by one space`},
		{name: "a field short", line: "9 (bash) S 1 9 9 0 -1 4194560 2264 0 0 0 1417", wantErr: "12 fields after (comm), want at least 13 (state ... stime)"},
		{name: "state of two letters", line: "9 (bash) SS 1 9 9" + tail, wantErr: `field state: "SS" is not one letter`},
		{name: "session not a number", line: "9 (bash) S 1 9 x" + tail, wantErr: `field session: "x" is not a number`},
		{name: "utime not a number", line: "9 (bash) S 1 9 9 0 -1 4194560 2264 0 0 0 u 93", wantErr: `field utime: "u" is not a tick count`},
		{name: "negative stime", line: "9 (bash) S 1 9 9 0 -1 4194560 2264 0 0 0 1417 -3", wantErr: `field stime: "-3" is not a tick count`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseStat(tt.line)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Errorf("ParseStat(%q) error %v, want %q", tt.line, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseStat(%q): %v", tt.line, err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ParseStat(%q) (-want +got):\n%s", tt.line, diff)
			}
		})
	}
}

func TestParseNSpid(t *testing.T) {
	tests := []struct {
		status  string
		want    []int
		wantErr string
	}{
		{status: "Name:\tbash\nNSpid:\t812\t23\t1\nPPid:\t1\n", want: []int{812, 23, 1}},
		{status: "NSpid:\t5\n", want: []int{5}},
		{status: "Name:\tbash\n", wantErr: "no NSpid line"},
		{status: "NSpid:\t\n", wantErr: "field NSpid: empty"},
		{status: "NSpid:\t5\t-1\n", wantErr: `field NSpid: "-1" is not a process id`},
		{status: "NSpid:\t5\tx\n", wantErr: `field NSpid: "x" is not a process id`},
		{status: "NSpid:\t0\t0\n", wantErr: "field NSpid: 0, the process is exiting: no such process"},
		{status: "NSpid:\t5\t0\n", wantErr: "field NSpid: 0, the process is exiting: no such process"},
	}
	for _, tt := range tests {
		got, err := ParseNSpid(tt.status)
		if tt.wantErr != "" {
			if err == nil || err.Error() != tt.wantErr {
				t.Errorf("ParseNSpid(%q) error %v, want %q", tt.status, err, tt.wantErr)
			}
			// only an exiting process's line reads as gone
			if exiting := strings.Contains(tt.wantErr, "exiting"); Gone(err) != exiting {
				t.Errorf("ParseNSpid(%q): Gone(%v) = %v, want %v", tt.status, err, !exiting, exiting)
			}
			continue
		}
		if err != nil || !cmp.Equal(tt.want, got) {
			t.Errorf("ParseNSpid(%q) = %v, %v; want %v", tt.status, got, err, tt.want)
		}
	}
}

func TestParseStatus(t *testing.T) {
	got := ParseStatus("Name:\tmy: prog\nCapEff:\t000001ffffffffff\nVmRSS:\t    2048 kB\nNoNewPrivs:\t1\nnot a field\nEmpty:\n")
	want := map[string]string{"Name": "my: prog", "CapEff": "000001ffffffffff", "VmRSS": "2048 kB", "NoNewPrivs": "1", "Empty": ""}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ParseStatus (-want +got):\n%s", diff)
	}
	own, err := Proc.Status("self")
	if err != nil {
		t.Fatal(err)
	}
	if f := ParseStatus(own); f["Pid"] != strconv.Itoa(os.Getpid()) || f["CapEff"] == "" {
		t.Errorf("own status: Pid %q CapEff %q", f["Pid"], f["CapEff"])
	}
}

func TestEnded(t *testing.T) {
	for s, want := range map[byte]bool{'Z': true, 'X': true, 'R': false, 'S': false, 'D': false, 'T': false, 't': false, 'I': false} {
		if got := (Stat{State: s}).Ended(); got != want {
			t.Errorf("state %c: Ended() = %v, want %v", s, got, want)
		}
	}
}

// TestTheKernelsOwnLine: this process's own stat line parses, and says what
// the runtime says of it.
func TestTheKernelsOwnLine(t *testing.T) {
	s, err := Proc.Stat(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if s.PID != os.Getpid() || s.PPID != os.Getppid() || s.State == 0 || s.Ended() {
		t.Errorf("own stat = %+v, want pid %d ppid %d, alive", s, os.Getpid(), os.Getppid())
	}
	if _, err := Proc.ThreadStat(os.Getpid(), os.Getpid()); err != nil {
		t.Errorf("main thread's stat: %v", err)
	}
	pids, err := Proc.NSpid("self")
	if err != nil || len(pids) == 0 || pids[len(pids)-1] != os.Getpid() {
		t.Errorf("NSpid(self) = %v, %v; want a list ending in %d", pids, err, os.Getpid())
	}
}

// TestAlive: a running child is alive; once it exited it is a zombie until
// reaped, and neither the zombie nor the reaped pid is alive.
func TestAlive(t *testing.T) {
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	if !Alive(pid) {
		t.Fatalf("running child %d is not alive", pid)
	}
	cmd.Process.Kill()
	deadline := time.Now().Add(10 * time.Second)
	for {
		s, err := Proc.Stat(pid)
		if err != nil {
			t.Fatal(err)
		}
		if s.State == 'Z' {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("killed child %d never became a zombie: %v", pid, s)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if Alive(pid) {
		t.Errorf("zombie %d counts as alive", pid)
	}
	cmd.Wait()
	if Alive(pid) {
		t.Errorf("reaped %d counts as alive", pid)
	}
}

// TestAll: a proc mount's every numbered directory is read; a process gone
// meanwhile is left out silently, a garbled line is left out and named.
func TestAll(t *testing.T) {
	root := t.TempDir()
	put := func(rel, content string) { harness.MustWrite(t, filepath.Join(root, rel), content) }
	put("12/stat", "12 (a b) S 1 12 12"+tail+"\n")
	put("13/stat", "13 garbled\n")
	put("self/stat", "12 (a b) S 1 12 12"+tail+"\n") // not a pid: not listed twice
	put("12/status", "NSpid:\t12\t1\n")
	if err := os.Mkdir(filepath.Join(root, "14"), 0o755); err != nil { // ended: no stat
		t.Fatal(err)
	}
	got, err := Root(root).All()
	if len(got) != 1 || got[0].PID != 12 || got[0].Comm != "a b" {
		t.Errorf("All() = %+v, want process 12 alone", got)
	}
	if want := filepath.Join(root, "13", "stat") + ": no (comm) field"; err == nil || err.Error() != want {
		t.Errorf("All() error %v, want %q", err, want)
	}
	if pids, err := Root(root).NSpid("12"); err != nil || !cmp.Equal(pids, []int{12, 1}) {
		t.Errorf("NSpid(12) = %v, %v", pids, err)
	}
	if _, err := Root(root).NSpid("14"); !Gone(err) {
		t.Errorf("NSpid of an ended process: %v, want a gone error", err)
	}
	if _, err := Root(filepath.Join(root, "none")).All(); err == nil || !strings.Contains(err.Error(), "none") {
		t.Errorf("All() of a missing mount: %v", err)
	}
}

func TestParseEnviron(t *testing.T) {
	for _, tc := range []struct {
		text string
		want []string
	}{
		{"", nil},
		{"A=1\x00B=2\x00", []string{"A=1", "B=2"}},
		{"A=1\x00B=x y", []string{"A=1", "B=x y"}},
		{"\x00A=1\x00\x00", []string{"A=1"}},
	} {
		if got := ParseEnviron(tc.text); strings.Join(got, "|") != strings.Join(tc.want, "|") || len(got) != len(tc.want) {
			t.Errorf("ParseEnviron(%q) = %q, want %q", tc.text, got, tc.want)
		}
	}
}

func TestParseLastPID(t *testing.T) {
	for _, tc := range []struct {
		text    string
		want    int
		wantErr string
	}{
		{text: "0.41 0.30 0.25 2/190 41235\n", want: 41235},
		{text: "0.00 0.00 0.00 1/1 1", want: 1},
		{text: "0.41 0.30 0.25 2/190\n", wantErr: "4 fields, want 5"},
		{text: "0.41 0.30 0.25 2/190 41235 7\n", wantErr: "6 fields, want 5"},
		{text: "0.41 0.30 0.25 2/190 x\n", wantErr: `field last pid: "x" is not a process id`},
		{text: "0.41 0.30 0.25 2/190 -3\n", wantErr: `field last pid: "-3" is not a process id`},
	} {
		got, err := ParseLastPID(tc.text)
		if got != tc.want || (err == nil) != (tc.wantErr == "") || err != nil && !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("ParseLastPID(%q) = %d, %v; want %d, error containing %q", tc.text, got, err, tc.want, tc.wantErr)
		}
	}
}

// TestLastPIDIsTheNewestProcess: right after this process starts a child,
// the last pid handed out is the child's (tried again while other
// processes of the machine fork in between).
func TestLastPIDIsTheNewestProcess(t *testing.T) {
	for try := 0; ; try++ {
		cmd := exec.Command("/bin/true")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		last, err := Proc.LastPID()
		cmd.Wait()
		if err != nil {
			t.Fatal(err)
		}
		if last == cmd.Process.Pid {
			return
		}
		if try == 50 {
			t.Fatalf("the last pid was never the child's just started (last %d, child %d)", last, cmd.Process.Pid)
		}
	}
}

// TestAllReadsLongLines: a stat line longer than the reader's first buffer
// is read whole (the buffer grows), and the next file is read from its
// start.
func TestAllReadsLongLines(t *testing.T) {
	root := t.TempDir()
	long := strings.Repeat("x", 3000)
	for pid, comm := range map[string]string{"21": long, "22": "short"} {
		if err := os.MkdirAll(filepath.Join(root, pid), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, pid, "stat"), []byte(pid+" ("+comm+") S 1 12 12"+tail+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := Root(root).All()
	if err != nil || len(got) != 2 {
		t.Fatalf("All() = %+v, %v; want two processes", got, err)
	}
	for _, s := range got {
		if want := map[int]string{21: long, 22: "short"}[s.PID]; s.Comm != want || s.Session != 12 {
			t.Errorf("process %d: comm of %d bytes, session %d; want %d bytes, session 12", s.PID, len(s.Comm), s.Session, len(want))
		}
	}
}
