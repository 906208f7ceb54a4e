package sessiontest

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dshsim/dshsim/pipeline/session"
)

func TestNewCreatesInTempDirAndClosesAtCleanup(t *testing.T) {
	var l *session.Log
	t.Run("inner", func(t *testing.T) {
		l = New(t, "s1", "/ws", session.WithClock(func() time.Time { return time.UnixMilli(42) }))
		if h := l.Header(); h.ID != "s1" || h.Cwd != "/ws" {
			t.Errorf("header %+v, want ID s1, Cwd /ws", h)
		}
		if ev, err := l.Append("x", nil); err != nil || ev.Time != 42 {
			t.Errorf("append to the new log: %+v, %v; want time 42 (the clock option passed through)", ev, err)
		}
		if got, err := session.Read(l.Path()); err != nil || len(got.Events) != 1 {
			t.Errorf("read back %s: %+v, %v", l.Path(), got, err)
		}
	})
	if _, err := l.Append("x", nil); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Errorf("append after the test ended: %v, want the log closed", err)
	}
}

func TestStartTurnOpensATurn(t *testing.T) {
	l := New(t, "s1", "")
	StartTurn(t, l)
	evs, err := l.Events()
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 1 || evs[0].Type != "turn/start" || string(evs[0].Data) != `{"turn":1}` || !session.OpenTurn(evs) {
		t.Errorf("events %+v, want one turn/start {\"turn\":1} that opens a turn", evs)
	}
}

// fatalTB records Fatal instead of stopping the test, and hands out a
// temporary directory that does not exist.
type fatalTB struct {
	testing.TB
	dir   string
	fatal string
}

func (f *fatalTB) Helper()           {}
func (f *fatalTB) Fatal(args ...any) { f.fatal = fmt.Sprint(args...) }
func (f *fatalTB) TempDir() string   { return f.dir }
func (f *fatalTB) Cleanup(func())    {}

func TestFailuresFailTheTest(t *testing.T) {
	f := &fatalTB{TB: t, dir: filepath.Join(t.TempDir(), "missing")}
	New(f, "s1", "")
	if !strings.Contains(f.fatal, "missing") {
		t.Errorf("New where the log cannot be created: fatal %q, want the error naming the path", f.fatal)
	}
	l := New(t, "s1", "")
	l.Close()
	f = &fatalTB{TB: t}
	StartTurn(f, l)
	if !strings.Contains(f.fatal, "closed") {
		t.Errorf("StartTurn on a closed log: fatal %q, want the append error", f.fatal)
	}
}
