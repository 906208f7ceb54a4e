package recording_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/dshsim/dshsim/harness/replay/recording"
)

// FuzzLoad writes a fuzzed session.jsonl and input.json into a recording
// directory (stdout.expected.jsonl from a real recording) and checks the
// recording parser: it never panics; every refusal is a *recording.Error
// naming one of the recording's files, a line within that file (0 = whole
// file) and a problem; a loaded recording derives a script or refuses with a
// *recording.Error, never a panic.
func FuzzLoad(f *testing.F) {
	src := filepath.Join("..", "..", "..", "transcripts", "upstream")
	ents, _ := os.ReadDir(src)
	var stdout []byte
	for _, e := range ents {
		s, err1 := os.ReadFile(filepath.Join(src, e.Name(), recording.SessionFile))
		in, err2 := os.ReadFile(filepath.Join(src, e.Name(), recording.InputFile))
		if err1 == nil && err2 == nil {
			f.Add(s, in)
			if stdout == nil {
				stdout, _ = os.ReadFile(filepath.Join(src, e.Name(), recording.StdoutFile))
			}
		}
	}
	f.Add([]byte("{}\n"), []byte(`{"steps":[]}`))
	f.Fuzz(func(t *testing.T, session, input []byte) {
		dir := filepath.Join(t.TempDir(), "rec")
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		files := map[string][]byte{recording.SessionFile: session, recording.InputFile: input, recording.StdoutFile: stdout}
		for name, data := range files {
			if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		check := func(stage string, err error) {
			var re *recording.Error
			if !errors.As(err, &re) {
				t.Fatalf("%s: error %T %v is not a *recording.Error", stage, err, err)
			}
			data, ok := files[re.File]
			if !ok {
				t.Fatalf("%s: error names file %q, not one of the recording's", stage, re.File)
			}
			if n := bytes.Count(data, []byte("\n")) + 1; re.Line < 0 || re.Line > n {
				t.Fatalf("%s: line %d outside %s (%d lines): %v", stage, re.Line, re.File, n, err)
			}
			if re.Problem == "" || re.Recording != "rec" {
				t.Fatalf("%s: error without problem or recording name: %+v", stage, re)
			}
		}
		r, err := recording.Load(dir)
		if err != nil {
			check("Load", err)
			return
		}
		if _, err := recording.Derive(r); err != nil {
			check("Derive", err)
		}
	})
}
