package session_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"

	"github.com/dshsim/dshsim/pipeline/session"
)

func compact(raw json.RawMessage) string {
	if len(raw) == 0 {
		return "null"
	}
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return "invalid:" + string(raw)
	}
	return b.String()
}

// FuzzParse checks the session-log parser: it never panics; a refusal is a
// *LineError at line 1 naming the file; every non-blank line after the header
// is either an event or a Bad entry with its own 1-based line number and the
// file name; and writing the decoded events back as JSON Lines parses to the
// same events (type, seq, time, data, sources, surfaceOp).
func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"type":"session","version":0,"id":"s1","createdAt":1,"cwd":"/w","delegationDepth":0}
{"type":"sandbox/mode","seq":1,"time":2,"data":{"mode":"read-only"}}
`))
	f.Add([]byte(`{"type":"session","version":0,"id":"s1","createdAt":1,"cwd":"/w","delegationDepth":0}
{"type":"a","seq":1,"time":2,"data":{}}
{"type":"b","seq":2,"ti`))
	f.Add([]byte(`{"type":"nope"}`))
	f.Add([]byte(""))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := session.Parse("log.jsonl", data)
		if err != nil {
			var le *session.LineError
			if !errors.As(err, &le) || le.Line != 1 || le.File != "log.jsonl" {
				t.Fatalf("refusal %v is not a line-1 *LineError naming the file", err)
			}
			return
		}
		if c.Header.Type != "session" {
			t.Fatalf("accepted header type %q", c.Header.Type)
		}
		lines := bytes.Split(data, []byte("\n"))
		if len(lines[len(lines)-1]) == 0 {
			lines = lines[:len(lines)-1]
		}
		nonBlank := 0
		for _, l := range lines[1:] {
			if len(bytes.TrimSpace(l)) > 0 {
				nonBlank++
			}
		}
		if len(c.Events)+len(c.Bad) != nonBlank {
			t.Fatalf("%d events + %d bad != %d non-blank lines", len(c.Events), len(c.Bad), nonBlank)
		}
		for _, b := range c.Bad {
			if b.File != "log.jsonl" || b.Line < 2 || b.Line > len(lines) || b.Err == nil {
				t.Fatalf("bad entry %+v out of range (lines %d)", b, len(lines))
			}
		}
		var out bytes.Buffer
		out.Write(lines[0])
		out.WriteByte('\n')
		for _, e := range c.Events {
			if e.Type == "" {
				t.Fatalf("event without type accepted")
			}
			b, err := json.Marshal(e)
			if err != nil {
				t.Fatalf("marshal %+v: %v", e, err)
			}
			out.Write(b)
			out.WriteByte('\n')
		}
		c2, err := session.Parse("log.jsonl", out.Bytes())
		if err != nil || len(c2.Bad) != 0 || len(c2.Events) != len(c.Events) {
			t.Fatalf("round trip: err %v, bad %v, %d vs %d events", err, c2.Bad, len(c2.Events), len(c.Events))
		}
		for i, e := range c.Events {
			g := c2.Events[i]
			if g.Type != e.Type || g.Seq != e.Seq || g.Time != e.Time || compact(g.Data) != compact(e.Data) ||
				compact(g.SurfaceOp) != compact(e.SurfaceOp) || len(g.SourceEventSeqs) != len(e.SourceEventSeqs) {
				t.Fatalf("round trip event %d: %+v != %+v", i, g, e)
			}
		}
	})
}
