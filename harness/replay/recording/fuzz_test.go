package recording

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// FuzzParseSession: any bytes give either events or an *Error naming
// session.jsonl and a line inside the input; never a panic.
func FuzzParseSession(f *testing.F) {
	for _, name := range []string{"fs-read", "escalation-rejected"} {
		b, err := os.ReadFile(filepath.Join(transcripts, name, SessionFile))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"type":"session"}` + "\n" + `{"type":"text-chunks","seq0":0,"data":{"turn":1,"step":1,"index":0,"dt":[],"texts":["a"]}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, events, err := ParseSession("fuzz", SessionFile, data)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error %v (%T) is not a *recording.Error", err, err)
			}
			if e.File != SessionFile || e.Line < 0 || e.Problem == "" {
				t.Fatalf("error %#v lacks file, line or problem", e)
			}
			return
		}
		r := &Recording{Name: "fuzz", Events: events}
		if _, err := Derive(r); err != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("Derive error %v (%T) is not a *recording.Error", err, err)
			}
		}
		_, _ = r.Policy()
	})
}
