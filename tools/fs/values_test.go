package fs

import (
	"strings"
	"testing"
)

// TestCanonicalValues pins the values run_code programs receive, in
// upstream's shapes and key order.
func TestCanonicalValues(t *testing.T) {
	r := newRig(t)
	a := r.agent("a")
	steps := []struct{ tool, args, want string }{
		{"write", `{"file_path":"f.txt","content":"one\ntwo\n"}`, `{"path":"<ws>/f.txt","operation":"create","before":null,"after":"one\ntwo\n"}`},
		{"read", `{"file_path":"f.txt"}`, `{"path":"<ws>/f.txt","offset":1,"lines":[{"number":1,"text":"one"},{"number":2,"text":"two"}],"totalLines":2}`},
		{"edit", `{"file_path":"f.txt","old_string":"two","new_string":"2"}`, `{"path":"<ws>/f.txt","before":"one\ntwo\n","after":"one\n2\n"}`},
		{"write", `{"file_path":"f.txt","content":"three\r\n"}`, `{"path":"<ws>/f.txt","operation":"update","before":"one\n2\n","after":"three\n"}`},
	}
	for _, s := range steps {
		out, err := r.run(a, s.tool, s.args)
		if err != nil {
			t.Fatalf("%s %s: %v", s.tool, s.args, err)
		}
		if got := strings.ReplaceAll(string(out.Value), r.ws, "<ws>"); got != s.want {
			t.Errorf("%s %s\n got: %s\nwant: %s", s.tool, s.args, got, s.want)
		}
	}
	if !r.tool("read").ConcurrencySafe || r.tool("write").ConcurrencySafe || r.tool("edit").ConcurrencySafe {
		t.Error("read runs beside other safe calls; write and edit run alone")
	}
}
