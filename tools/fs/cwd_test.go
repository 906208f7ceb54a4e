package fs

import (
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/pipeline/session/sessiontest"
)

// agentAt returns an agent whose session log header carries cwd.
func (r *rig) agentAt(id, cwd string) *pipeline.Agent {
	r.t.Helper()
	return &pipeline.Agent{ID: id, Session: sessiontest.New(r.t, id, cwd)}
}

func TestSessionCwd(t *testing.T) {
	r := newRig(t)
	for _, d := range []string{"one", "two", "nested/real"} {
		os.MkdirAll(r.path(d), 0o755)
	}
	os.Symlink(r.path("nested/real"), r.path("link"))
	a, b := r.agentAt("a", r.path("one")), r.agentAt("b", r.path("two"))
	if _, err := r.run(a, "write", `{"file_path":"f.txt","content":"a"}`); err != nil {
		t.Fatal(err)
	}
	if _, err := r.run(b, "write", `{"file_path":"f.txt","content":"b"}`); err != nil {
		t.Fatal(err)
	}
	for dir, want := range map[string]string{"one": "a", "two": "b"} {
		if got, _ := r.content(dir + "/f.txt"); got != want {
			t.Fatalf("%s/f.txt = %q, want %q", dir, got, want)
		}
	}
	t.Run("read and edit resolve against their own session cwd", func(t *testing.T) {
		out, err := r.run(b, "read", `{"file_path":"f.txt"}`)
		if err != nil || !strings.HasPrefix(out.Content[0].Text, "<path>"+r.path("two/f.txt")+"</path>") {
			t.Fatalf("read: %v %v", out.Content, err)
		}
		if _, err := r.run(b, "edit", `{"file_path":"f.txt","old_string":"b","new_string":"B"}`); err != nil {
			t.Fatal(err)
		}
		if got, _ := r.content("two/f.txt"); got != "B" {
			t.Fatalf("two/f.txt = %q", got)
		}
	})
	t.Run("a session cwd is kept verbatim without dot-dot", func(t *testing.T) {
		c := r.agentAt("c", r.path("link"))
		out, err := r.run(c, "write", `{"file_path":"g.txt","content":"c"}`)
		if err != nil || !strings.HasPrefix(out.Content[0].Text, "<path>"+r.path("link/g.txt")+"</path>") {
			t.Fatalf("write: %v %v", out.Content, err)
		}
	})
	t.Run("a dot-dot path canonicalizes the session cwd first", func(t *testing.T) {
		c := r.agentAt("d", r.path("link"))
		out, err := r.run(c, "write", `{"file_path":"../h.txt","content":"d"}`)
		if err != nil || !strings.HasPrefix(out.Content[0].Text, "<path>"+r.path("nested/h.txt")+"</path>") {
			t.Fatalf("write: %v %v", out.Content, err)
		}
	})
	t.Run("an agentless call resolves against the provider cwd", func(t *testing.T) {
		out, err := r.run(nil, "write", `{"file_path":"agentless.txt","content":"x"}`)
		if err != nil || !strings.HasPrefix(out.Content[0].Text, "<path>"+r.path("agentless.txt")+"</path>") {
			t.Fatalf("write: %v %v", out.Content, err)
		}
	})
}

// TestReadLargeFile reads a file above the default stream threshold (10 MiB):
// the window and the exact total come from one bounded-memory pass.
func TestReadLargeFile(t *testing.T) {
	r := newRig(t, withCaps(3, 2000, 51200))
	line := strings.Repeat("z", 99) + "\n"
	r.put("big.log", strings.Repeat(line, 110000)) // 11 MB
	out, err := r.run(r.agent("A"), "read", `{"file_path":"big.log","offset":109999}`)
	if err != nil {
		t.Fatal(err)
	}
	text := out.Content[0].Text
	if !strings.Contains(text, "\n109999: zzz") || !strings.HasSuffix(text, "(End of file - total 110000 lines)\n</content>") {
		t.Fatalf("large read window: %q", text[len(text)-200:])
	}
}

// TestReadGiantLineBoundedMemory: a 32 MiB file without a newline is read
// with bounded memory (the line buffer keeps maxLineLength+1 units).
func TestReadGiantLineBoundedMemory(t *testing.T) {
	r := newRig(t)
	f, err := os.Create(r.path("giant.txt"))
	if err != nil {
		t.Fatal(err)
	}
	chunk := []byte(strings.Repeat("q", 1<<20))
	for range 32 {
		f.Write(chunk)
	}
	f.Close()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	out, err := r.run(r.agent("A"), "read", `{"file_path":"giant.txt"}`)
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("read of a 32 MiB line allocated %d bytes", alloc)
	if alloc > 4<<20 {
		t.Fatalf("reading a 32 MiB line allocated %d bytes", alloc)
	}
	if !strings.Contains(out.Content[0].Text, "... (line truncated to 2000 chars)\n\n(End of file - total 1 lines)") {
		t.Fatalf("giant line: %q", out.Content[0].Text[len(out.Content[0].Text)-120:])
	}
}
