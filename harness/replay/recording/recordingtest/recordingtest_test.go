package recordingtest

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// fatalTB is the test but for Fatal, whose message it keeps instead of
// ending the test.
type fatalTB struct {
	testing.TB
	msg string
}

func (f *fatalTB) Fatal(args ...any) { f.msg = fmt.Sprint(args...) }

// TestLoad: a kept recording loads; a directory that holds none fails the
// test with recording.Load's error, which names the missing file.
func TestLoad(t *testing.T) {
	if rec := Load(t, filepath.Join("..", "..", "..", "..", "transcripts", "code-mode-turn")); rec == nil || rec.Name == "" {
		t.Fatalf("Load = %+v", rec)
	}
	f := &fatalTB{TB: t}
	Load(f, t.TempDir())
	if !strings.Contains(f.msg, "missing file") {
		t.Errorf("Load of an empty directory: Fatal(%q), want recording.Load's missing-file error", f.msg)
	}
}
