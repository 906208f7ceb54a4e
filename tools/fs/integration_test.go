package fs

import (
	"context"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/dshsim/dshsim/internal/waittest"
	"github.com/dshsim/dshsim/pipeline"
)

// step is one model call (tool != "") or one constructed user action (user != nil).
type step struct {
	agent string // "" = agentless
	tool  string
	args  string // JSON; "<ws>" is replaced by the workspace
	user  func(r *rig)
	text  string // exact result text ("Error: ..." for errors), "<ws>" normalised
	code  string // FS_* code for errors
	file  string // optional: file to check after the step
	holds string // its expected content ("<gone>" = absent)
}

const (
	remRead   = " — read the file, then retry"
	remReread = " — re-read the file, then retry"
)

func readOut(path string, body string) string {
	return "<path><ws>/" + path + "</path>\n<type>file</type>\n<content>\n" + body + "\n</content>"
}

func TestIntegration(t *testing.T) {
	cases := []struct {
		name  string
		opts  []rigOpt
		steps []step
	}{
		{"create writes exact bytes", nil, []step{
			{agent: "A", tool: "write", args: `{"file_path":"a.txt","content":"x\r\ny"}`, text: readOut("a.txt", "Created file"), file: "a.txt", holds: "x\r\ny"},
		}},
		{"unread overwrite is rejected and the file is intact, then read unblocks it", nil, []step{
			{user: func(r *rig) { r.put("a.txt", "orig") }},
			{agent: "A", tool: "write", args: `{"file_path":"a.txt","content":"new"}`, text: `Error: cannot overwrite existing "<ws>/a.txt" without reading it first` + remRead, code: "FS_NOT_OBSERVED", file: "a.txt", holds: "orig"},
			{agent: "A", tool: "read", args: `{"file_path":"a.txt"}`, text: readOut("a.txt", "1: orig\n\n(End of file - total 1 lines)")},
			{agent: "A", tool: "write", args: `{"file_path":"a.txt","content":"new"}`, text: readOut("a.txt", "Updated file"), file: "a.txt", holds: "new"},
		}},
		{"stale overwrite is rejected with the remedy and a re-read unblocks it", nil, []step{
			{user: func(r *rig) { r.put("a.txt", "v1") }},
			{agent: "A", tool: "read", args: `{"file_path":"a.txt"}`, text: readOut("a.txt", "1: v1\n\n(End of file - total 1 lines)")},
			{user: func(r *rig) { r.put("a.txt", "user v2") }},
			{agent: "A", tool: "write", args: `{"file_path":"a.txt","content":"model"}`, text: `Error: cannot write "<ws>/a.txt": file changed since it was read` + remReread, code: "FS_STALE_VERSION", file: "a.txt", holds: "user v2"},
			{agent: "A", tool: "read", args: `{"file_path":"a.txt"}`, text: readOut("a.txt", "1: user v2\n\n(End of file - total 1 lines)")},
			{agent: "A", tool: "write", args: `{"file_path":"a.txt","content":"model"}`, text: readOut("a.txt", "Updated file"), file: "a.txt", holds: "model"},
		}},
		{"read numbers lines, pages and refuses binary", nil, []step{
			{user: func(r *rig) { r.put("four.txt", "a\nb\nc\nd\n"); r.put("bin", "a\x00b") }},
			{agent: "A", tool: "read", args: `{"file_path":"four.txt","offset":2,"limit":2}`, text: readOut("four.txt", "2: b\n3: c\n\n(Showing lines 2-3 of 4. Use offset=4 to continue.)")},
			{agent: "A", tool: "read", args: `{"file_path":"bin"}`, text: `Error: cannot read "<ws>/bin": binary file`, code: "FS_NOT_TEXT"},
		}},
		{"edit needs a read; a windowed read authorizes the whole file", nil, []step{
			{user: func(r *rig) { r.put("e.txt", "one\ntwo\nthree\nfour\n") }},
			{agent: "A", tool: "edit", args: `{"file_path":"e.txt","old_string":"four","new_string":"4"}`, text: `Error: edit requires reading "<ws>/e.txt" first` + remRead, code: "FS_NOT_OBSERVED", file: "e.txt", holds: "one\ntwo\nthree\nfour\n"},
			{agent: "A", tool: "read", args: `{"file_path":"e.txt","limit":1}`, text: readOut("e.txt", "1: one\n\n(Showing lines 1-1 of 4. Use offset=2 to continue.)")},
			{agent: "A", tool: "edit", args: `{"file_path":"e.txt","old_string":"four","new_string":"4"}`, text: "The file <ws>/e.txt has been updated successfully.", file: "e.txt", holds: "one\ntwo\nthree\n4\n"},
			{agent: "A", tool: "edit", args: `{"file_path":"e.txt","old_string":"o","new_string":"0"}`, text: `Error: old_string matched 2 times in "<ws>/e.txt"; provide a more specific old_string or set replace_all to true`, code: "FS_AMBIGUOUS_EDIT"},
			{agent: "A", tool: "edit", args: `{"file_path":"e.txt","old_string":"o","new_string":"0","replace_all":true}`, text: "The file <ws>/e.txt has been updated. All occurrences were successfully replaced.", file: "e.txt", holds: "0ne\ntw0\nthree\n4\n"},
			{agent: "A", tool: "edit", args: `{"file_path":"e.txt","old_string":"zzz","new_string":"y"}`, text: `Error: old_string was not found in "<ws>/e.txt"`, code: "FS_EDIT_NOT_FOUND"},
		}},
		{"stale edit after a windowed read, re-read unblocks", nil, []step{
			{user: func(r *rig) { r.put("e.txt", "a\nb\n") }},
			{agent: "A", tool: "read", args: `{"file_path":"e.txt","offset":2}`, text: readOut("e.txt", "2: b\n\n(End of file - total 2 lines)")},
			{user: func(r *rig) { r.put("e.txt", "a\nb\nuser\n") }},
			{agent: "A", tool: "edit", args: `{"file_path":"e.txt","old_string":"a","new_string":"A"}`, text: `Error: cannot edit "<ws>/e.txt": file changed since it was read` + remReread, code: "FS_STALE_VERSION", file: "e.txt", holds: "a\nb\nuser\n"},
			{agent: "A", tool: "read", args: `{"file_path":"e.txt"}`, text: readOut("e.txt", "1: a\n2: b\n3: user\n\n(End of file - total 3 lines)")},
			{agent: "A", tool: "edit", args: `{"file_path":"e.txt","old_string":"a","new_string":"A"}`, text: "The file <ws>/e.txt has been updated successfully.", file: "e.txt", holds: "A\nb\nuser\n"},
		}},
		{"write then edit then write needs no read", nil, []step{
			{agent: "A", tool: "write", args: `{"file_path":"n.txt","content":"alpha\n"}`, text: readOut("n.txt", "Created file")},
			{agent: "A", tool: "edit", args: `{"file_path":"n.txt","old_string":"alpha","new_string":"beta"}`, text: "The file <ws>/n.txt has been updated successfully."},
			{agent: "A", tool: "write", args: `{"file_path":"n.txt","content":"gamma\n"}`, text: readOut("n.txt", "Updated file"), file: "n.txt", holds: "gamma\n"},
		}},
		{"a direct provider read does not authorize an edit", nil, []step{
			{user: func(r *rig) {
				r.put("d.txt", "x")
				tg, _ := r.fs.Resolve("d.txt", "")
				if _, err := r.fs.ReadText(context.Background(), tg); err != nil {
					r.t.Fatal(err)
				}
			}},
			{agent: "A", tool: "edit", args: `{"file_path":"d.txt","old_string":"x","new_string":"y"}`, text: `Error: edit requires reading "<ws>/d.txt" first` + remRead, code: "FS_NOT_OBSERVED"},
		}},
		{"deleted target: stale, then not found, then recreated", nil, []step{
			{user: func(r *rig) { r.put("gone.txt", "x") }},
			{agent: "A", tool: "read", args: `{"file_path":"gone.txt"}`, text: readOut("gone.txt", "1: x\n\n(End of file - total 1 lines)")},
			{user: func(r *rig) { os.Remove(r.path("gone.txt")) }},
			{agent: "A", tool: "edit", args: `{"file_path":"gone.txt","old_string":"x","new_string":"y"}`, text: `Error: cannot edit "<ws>/gone.txt": file changed since it was read` + remReread, code: "FS_STALE_VERSION"},
			{agent: "A", tool: "write", args: `{"file_path":"gone.txt","content":"y"}`, text: `Error: cannot write "<ws>/gone.txt": file no longer exists` + remReread, code: "FS_STALE_VERSION", file: "gone.txt", holds: "<gone>"},
			{agent: "A", tool: "read", args: `{"file_path":"gone.txt"}`, text: `Error: cannot read "<ws>/gone.txt": not found`, code: "FS_NOT_FOUND"},
			{agent: "A", tool: "edit", args: `{"file_path":"gone.txt","old_string":"x","new_string":"y"}`, text: `Error: cannot edit "<ws>/gone.txt": not found`, code: "FS_NOT_FOUND"},
			{agent: "A", tool: "write", args: `{"file_path":"gone.txt","content":"y"}`, text: readOut("gone.txt", "Created file"), file: "gone.txt", holds: "y"},
		}},
		{"sessions are isolated", nil, []step{
			{user: func(r *rig) { r.put("s.txt", "x") }},
			{agent: "A", tool: "read", args: `{"file_path":"s.txt"}`, text: readOut("s.txt", "1: x\n\n(End of file - total 1 lines)")},
			{agent: "B", tool: "edit", args: `{"file_path":"s.txt","old_string":"x","new_string":"y"}`, text: `Error: edit requires reading "<ws>/s.txt" first` + remRead, code: "FS_NOT_OBSERVED"},
			{agent: "B", tool: "write", args: `{"file_path":"s.txt","content":"y"}`, text: `Error: cannot overwrite existing "<ws>/s.txt" without reading it first` + remRead, code: "FS_NOT_OBSERVED"},
			{agent: "A", tool: "edit", args: `{"file_path":"s.txt","old_string":"x","new_string":"y"}`, text: "The file <ws>/s.txt has been updated successfully."},
		}},
		{"agentless calls are authorized for nothing", nil, []step{
			{user: func(r *rig) { r.put("s.txt", "x") }},
			{tool: "read", args: `{"file_path":"<ws>/s.txt"}`, text: readOut("s.txt", "1: x\n\n(End of file - total 1 lines)")},
			{tool: "edit", args: `{"file_path":"<ws>/s.txt","old_string":"x","new_string":"y"}`, text: `Error: edit requires reading "<ws>/s.txt" first` + remRead, code: "FS_NOT_OBSERVED"},
			{tool: "write", args: `{"file_path":"<ws>/new.txt","content":"y"}`, text: readOut("new.txt", "Created file")},
			{tool: "write", args: `{"file_path":"<ws>/new.txt","content":"z"}`, text: `Error: cannot overwrite existing "<ws>/new.txt" without reading it first` + remRead, code: "FS_NOT_OBSERVED", file: "new.txt", holds: "y"},
		}},
		{"bare deployment writes and edits unguarded", []rigOpt{bare()}, []step{
			{user: func(r *rig) { r.put("b.txt", "x") }},
			{agent: "A", tool: "read", args: `{"file_path":"b.txt"}`, text: readOut("b.txt", "1: x\n\n(End of file - total 1 lines)")},
			{agent: "B", tool: "write", args: `{"file_path":"c.txt","content":"c"}`, text: readOut("c.txt", "Created file")},
			{agent: "B", tool: "write", args: `{"file_path":"b.txt","content":"y"}`, text: readOut("b.txt", "Updated file"), file: "b.txt", holds: "y"},
			{agent: "B", tool: "edit", args: `{"file_path":"b.txt","old_string":"y","new_string":"z"}`, text: "The file <ws>/b.txt has been updated successfully.", file: "b.txt", holds: "z"},
			{agent: "B", tool: "edit", args: `{"file_path":"missing.txt","old_string":"y","new_string":"z"}`, text: `Error: cannot edit "<ws>/missing.txt": file changed since it was read` + remReread, code: "FS_STALE_VERSION"},
			{agent: "B", tool: "edit", args: `{"file_path":"b.txt","old_string":"q","new_string":"z"}`, text: `Error: old_string was not found in "<ws>/b.txt"`, code: "FS_EDIT_NOT_FOUND"},
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := newRig(t, c.opts...)
			for i, s := range c.steps {
				if s.user != nil {
					s.user(r)
					continue
				}
				var agent = r.agentOrNil(s.agent)
				out, err := r.run(agent, s.tool, strings.ReplaceAll(s.args, "<ws>", r.ws))
				checkStep(t, r, i, s, out, err)
			}
			if n := r.fs.HeldLocks(); n != 0 {
				t.Fatalf("%d lock entries left", n)
			}
		})
	}
}

func (r *rig) agentOrNil(id string) *pipeline.Agent {
	if id == "" {
		return nil
	}
	return r.agent(id)
}

func checkStep(t *testing.T, r *rig, i int, s step, out pipeline.Output, err error) {
	t.Helper()
	var text string
	if err != nil {
		text = "Error: " + pipeline.ErrorMessage(err)
	} else {
		for _, b := range out.Content {
			text += b.Text
		}
	}
	text = strings.ReplaceAll(text, r.ws, "<ws>")
	if text != s.text {
		t.Fatalf("step %d %s %s:\n got %q\nwant %q", i, s.tool, s.args, text, s.text)
	}
	_, code, _ := pipeline.CodeOf(err)
	if code != s.code {
		t.Fatalf("step %d %s: code %q, want %q", i, s.tool, code, s.code)
	}
	if s.file != "" {
		got, ok := r.content(s.file)
		if s.holds == "<gone>" {
			if ok {
				t.Fatalf("step %d: %s exists with %q, want absent", i, s.file, got)
			}
		} else if got != s.holds {
			t.Fatalf("step %d: %s holds %q, want %q", i, s.file, got, s.holds)
		}
	}
}

// TestConcurrentReadThenWrite: 20 agents read the same file, then all write
// at once. Exactly one write wins, the others get the stale-version error with
// its remedy, and the file holds the winner's content whole.
func TestConcurrentReadThenWrite(t *testing.T) {
	r := newRig(t)
	r.put("race.txt", "base\n")
	const n = 20
	agents := make([]*pipeline.Agent, n)
	for i := range agents {
		agents[i] = r.agent(string(rune('a'+i)) + "-agent")
		if _, err := r.run(agents[i], "read", `{"file_path":"race.txt"}`); err != nil {
			t.Fatal(err)
		}
	}
	contents := make([]string, n)
	errs := make([]error, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		contents[i] = strings.Repeat(strings.Repeat(string(rune('A'+i)), 63)+"\n", 1024) // 64 KiB each
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			_, errs[i] = r.run(agents[i], "write", `{"file_path":"race.txt","content":"`+strings.ReplaceAll(contents[i], "\n", `\n`)+`"}`)
		}()
	}
	close(start)
	waittest.Group(t, &wg, "the racing writes to return")
	final, _ := r.content("race.txt")
	winners := 0
	for i, err := range errs {
		if err == nil {
			winners++
			if final != contents[i] {
				t.Fatalf("winner %d's content is not the file's content whole (%d vs %d bytes)", i, len(final), len(contents[i]))
			}
			continue
		}
		want := `cannot write "` + r.path("race.txt") + `": file changed since it was read` + remReread
		if _, code, _ := pipeline.CodeOf(err); code != "FS_STALE_VERSION" || err.Error() != want {
			t.Fatalf("loser %d: %v (code %s)", i, err, code)
		}
	}
	if winners != 1 {
		t.Fatalf("%d writes won, want exactly 1", winners)
	}
	if r.fs.HeldLocks() != 0 {
		t.Fatal("lock entries left")
	}
	ents, _ := os.ReadDir(r.ws)
	if len(ents) != 1 {
		t.Fatalf("workspace holds %d entries (staging residue?)", len(ents))
	}
}

// TestOlderObservationLosesAtCAS: two sessions read the same version; the
// second writer's observation is older than the file and loses.
func TestOlderObservationLosesAtCAS(t *testing.T) {
	r := newRig(t)
	r.put("e.txt", "v1\n")
	a, b := r.agent("A"), r.agent("B")
	for _, ag := range []*pipeline.Agent{a, b} {
		if _, err := r.run(ag, "read", `{"file_path":"e.txt"}`); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := r.run(b, "edit", `{"file_path":"e.txt","old_string":"v1","new_string":"b"}`); err != nil {
		t.Fatal(err)
	}
	_, err := r.run(a, "edit", `{"file_path":"e.txt","old_string":"v1","new_string":"a"}`)
	if !pipeline.HasCode(err, "FS_STALE_VERSION") {
		t.Fatalf("older observation: %v, want FS_STALE_VERSION", err)
	}
	if got, _ := r.content("e.txt"); got != "b\n" {
		t.Fatalf("file holds %q", got)
	}
}
