package session

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dshsim/dshsim/internal/waittest"
)

const helperEnv = "DSHSIM_SESSION_APPEND_HELPER"

func TestMain(m *testing.M) {
	if spec := os.Getenv(helperEnv); spec != "" {
		os.Exit(appendHelper(spec))
	}
	os.Exit(m.Run())
}

// appendHelper is a child process: "<path>|<writer>|<count>|<size>".
func appendHelper(spec string) int {
	parts := strings.Split(spec, "|")
	n, _ := strconv.Atoi(parts[2])
	size, _ := strconv.Atoi(parts[3])
	l, err := Open(parts[0])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer l.Close()
	for i := 0; i < n; i++ {
		if _, err := l.Append("test/line", payload(parts[1], i, size)); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	return 0
}

type line struct {
	Writer string `json:"writer"`
	I      int    `json:"i"`
	Pad    string `json:"pad"`
}

func payload(writer string, i, size int) line {
	return line{Writer: writer, I: i, Pad: strings.Repeat(writer[:1], size)}
}

func fixedClock() time.Time { return time.UnixMilli(1700000000000) }

func newLog(t *testing.T) (*Log, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "s.jsonl")
	l, err := Create(path, Header{ID: "sess-1", Cwd: "/ws", CreatedAt: 1}, WithClock(fixedClock))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l, path
}

// checkIntact asserts every line decodes, the expected number of events is
// there, seqs are exactly 0..n-1, and each writer's lines are complete and in order.
func checkIntact(t *testing.T, path string, want int, size int) {
	t.Helper()
	c, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Bad) != 0 {
		t.Fatalf("bad lines: %v", c.Bad[0])
	}
	if len(c.Events) != want {
		t.Fatalf("got %d events, want %d", len(c.Events), want)
	}
	seen := map[int64]bool{}
	last := map[string]int{}
	for _, e := range c.Events {
		if seen[e.Seq] {
			t.Fatalf("seq %d used twice", e.Seq)
		}
		seen[e.Seq] = true
		var l line
		if err := json.Unmarshal(e.Data, &l); err != nil {
			t.Fatal(err)
		}
		if len(l.Pad) != size || strings.Trim(l.Pad, l.Writer[:1]) != "" {
			t.Fatalf("event seq %d: payload of writer %s mixed with other bytes", e.Seq, l.Writer)
		}
		if prev, ok := last[l.Writer]; ok && l.I != prev+1 {
			t.Fatalf("writer %s: line %d after %d", l.Writer, l.I, prev)
		}
		last[l.Writer] = l.I
	}
	for i := 0; i < want; i++ {
		if !seen[int64(i)] {
			t.Fatalf("seq %d missing", i)
		}
	}
}

func TestConcurrentGoroutinesNeverInterleave(t *testing.T) {
	l, path := newLog(t)
	const writers, each, size = 50, 10, 5000
	var wg sync.WaitGroup
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			name := string(rune('A'+w%26)) + strconv.Itoa(w)
			for i := 0; i < each; i++ {
				if _, err := l.Append("test/line", payload(name, i, size)); err != nil {
					t.Error(err)
					return
				}
			}
		}(w)
	}
	waittest.Group(t, &wg, "the writers to finish")
	checkIntact(t, path, writers*each, size)
}

func TestSeveralDescriptorsNeverInterleave(t *testing.T) {
	_, path := newLog(t)
	const descriptors, each, size = 8, 25, 20000 // lines larger than a pipe buffer and a page
	var wg sync.WaitGroup
	for d := 0; d < descriptors; d++ {
		l, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		wg.Add(1)
		go func(d int, l *Log) {
			defer wg.Done()
			name := string(rune('a'+d)) + "fd"
			for i := 0; i < each; i++ {
				if _, err := l.Append("test/line", payload(name, i, size)); err != nil {
					t.Error(err)
					return
				}
			}
		}(d, l)
	}
	waittest.Group(t, &wg, "the writers to finish")
	checkIntact(t, path, descriptors*each, size)
}

func TestSeveralProcessesNeverInterleave(t *testing.T) {
	_, path := newLog(t)
	const procs, each, size = 4, 25, 20000
	var cmds []*exec.Cmd
	for p := 0; p < procs; p++ {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s|%cproc%d|%d|%d", helperEnv, path, 'P'+p, p, each, size))
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
		t.Cleanup(func() {
			if stderr.Len() > 0 {
				t.Logf("child stderr: %s", stderr.String())
			}
		})
	}
	for _, c := range cmds {
		if err := waittest.Exit(t, c, "a writing child"); err != nil {
			t.Fatalf("child: %v", err)
		}
	}
	checkIntact(t, path, procs*each, size)
}

func TestTornLastLine(t *testing.T) {
	tests := []struct {
		name   string
		reopen bool // a new Log opens the file after the crash; else the already open Log appends
	}{
		{name: "reported and not merged after reopening", reopen: true},
		{name: "reported and not merged by an already open appender", reopen: false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l, path := newLog(t)
			for i := 0; i < 2; i++ {
				if _, err := l.Append("test/ok", map[string]int{"i": i}); err != nil {
					t.Fatal(err)
				}
			}
			// A crashed writer's half line (no newline).
			f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
			if err != nil {
				t.Fatal(err)
			}
			f.WriteString(`{"type":"test/crashed","seq":2,"time":1,"da`)
			f.Close()

			c, err := Read(path)
			if err != nil {
				t.Fatal(err)
			}
			if len(c.Events) != 2 || len(c.Bad) != 1 || c.Bad[0].Line != 4 || !strings.Contains(c.Bad[0].Error(), "s.jsonl:4: torn last line") {
				t.Fatalf("before append: events %d, bad %v", len(c.Events), c.Bad)
			}

			app := l
			if tc.reopen {
				if app, err = Open(path, WithClock(fixedClock)); err != nil {
					t.Fatal(err)
				}
				defer app.Close()
			}
			e, err := app.Append("test/after", map[string]string{"x": "y"})
			if err != nil {
				t.Fatal(err)
			}
			if e.Seq != 2 {
				t.Errorf("seq after torn line = %d, want 2", e.Seq)
			}
			c, err = Read(path)
			if err != nil {
				t.Fatal(err)
			}
			if len(c.Events) != 3 || c.Events[2].Type != "test/after" {
				t.Fatalf("after append: events %+v", c.Events)
			}
			if len(c.Bad) != 1 || c.Bad[0].Line != 4 {
				t.Fatalf("after append: torn line must stay reported at line 4, got %v", c.Bad)
			}
			raw, _ := os.ReadFile(path)
			if !bytes.Contains(raw, []byte("\"da\n{\"type\":\"test/after\"")) {
				t.Errorf("torn bytes not terminated before the next event:\n%s", raw)
			}
		})
	}
}

func TestParseReportsBadInput(t *testing.T) {
	tests := []struct {
		name, data, want string
	}{
		{name: "empty file has no header", data: "", want: "x.jsonl:1: empty log: missing session header"},
		{name: "header of another type", data: `{"type":"other"}` + "\n", want: `x.jsonl:1: bad session header: field type: want "session", got "other"`},
		{name: "event without type", data: `{"type":"session"}` + "\n" + `{"seq":1}` + "\n", want: "x.jsonl:2: field type: missing"},
		{name: "garbage middle line", data: `{"type":"session"}` + "\n" + "nope\n" + `{"type":"a","seq":1}` + "\n", want: "x.jsonl:2: invalid character"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Parse("x.jsonl", []byte(tc.data))
			var got string
			switch {
			case err != nil:
				got = err.Error()
			case len(c.Bad) > 0:
				got = c.Bad[0].Error()
			}
			if !strings.HasPrefix(got, tc.want) {
				t.Errorf("got %q, want prefix %q", got, tc.want)
			}
		})
	}
}

func TestAppendAfterTruncationFails(t *testing.T) {
	l, path := newLog(t)
	if _, err := l.Append("a", 1); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, 10); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Append("b", 2); err == nil || !strings.Contains(err.Error(), "shrank") {
		t.Fatalf("append after truncation: %v", err)
	}
}

// TestCreateSeeded: a forked child's log starts with a copy of events seq
// 0..n-1 (as they are), then appends continue the numbering; a seed out of
// order is refused and leaves no file.
func TestCreateSeeded(t *testing.T) {
	dir := t.TempDir()
	seed := []Event{
		{Type: "turn/start", Seq: 0, Time: 11, Data: json.RawMessage(`{"turn":1}`)},
		{Type: "turn/end", Seq: 1, Time: 12, Data: json.RawMessage(`{"turn":1,"reason":{"kind":"completed"}}`)},
	}
	path := filepath.Join(dir, "child.jsonl")
	l, err := CreateSeeded(path, Header{ID: "c", Cwd: "/w", ParentSession: "p", SeedLength: 2, Origin: "subagent", DelegationDepth: 1}, seed)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Append("session/end-seed", struct{}{}); err != nil {
		t.Fatal(err)
	}
	l.Close()
	data, _ := os.ReadFile(path)
	want := `{"type":"session","version":0,"id":"c","createdAt":0,"cwd":"/w","parentSession":"p","seedLength":2,"origin":"subagent","delegationDepth":1}
{"type":"turn/start","seq":0,"time":11,"data":{"turn":1}}
{"type":"turn/end","seq":1,"time":12,"data":{"turn":1,"reason":{"kind":"completed"}}}
`
	if got := string(data); !strings.HasPrefix(got, want) || !strings.Contains(got, `{"type":"session/end-seed","seq":2,`) {
		t.Errorf("seeded log:\n%s", got)
	}
	bad := filepath.Join(dir, "bad.jsonl")
	if _, err := CreateSeeded(bad, Header{ID: "b"}, seed[1:]); err == nil || !strings.Contains(err.Error(), "seed event 0 (turn/end) has seq 1") {
		t.Errorf("out-of-order seed: %v", err)
	}
	if _, err := os.Stat(bad); !os.IsNotExist(err) {
		t.Errorf("a refused seed left %s", bad)
	}
}

// TestAddCheck: a check's error refuses the append unchanged and leaves
// the log as it was (the next seq is not used up), checks run in the order
// added, they see the event's type and data, and a removed check vets
// nothing.
func TestAddCheck(t *testing.T) {
	l, err := Create(filepath.Join(t.TempDir(), "s.jsonl"), Header{ID: "s"})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	refused := fmt.Errorf("refused")
	var order []string
	removeA := l.AddCheck(func(typ string, data json.RawMessage) error {
		order = append(order, "a:"+typ+":"+string(data))
		if typ == "x/refused" {
			return refused
		}
		return nil
	})
	removeB := l.AddCheck(func(typ string, _ json.RawMessage) error { order = append(order, "b:"+typ); return nil })
	if _, err := l.Append("x/ok", map[string]int{"n": 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Append("x/refused", map[string]int{"n": 2}); err != refused {
		t.Fatalf("refused append: %v, want the check's error unchanged", err)
	}
	if got, want := strings.Join(order, " "), `a:x/ok:{"n":1} b:x/ok a:x/refused:{"n":2}`; got != want {
		t.Errorf("checks ran %s, want %s", got, want)
	}
	removeA()
	removeB()
	e, err := l.Append("x/refused", nil)
	if err != nil || e.Seq != 1 {
		t.Fatalf("after removal: seq %d, %v; want seq 1 (the refused append left no trace)", e.Seq, err)
	}
	evs, err := l.Events()
	if err != nil || len(evs) != 2 || evs[0].Type != "x/ok" || evs[1].Type != "x/refused" {
		t.Errorf("log holds %+v, %v", evs, err)
	}
}
