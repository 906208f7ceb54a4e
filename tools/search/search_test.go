package search

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dshsim/dshsim/harness"
	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/pipeline/pipelinetest"
	"github.com/dshsim/dshsim/pipeline/session/sessiontest"
	"github.com/dshsim/dshsim/tools/toolreg"
)

func needRg(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("rg"); err != nil {
		t.Skip("needs rg (Debian's ripgrep) on PATH")
	}
}

// seedTree writes upstream's prepareFsSearchWorkspace tree: eight files,
// "fixture\n" each, modified 1 to 8 ms after 2000-01-01 in this order.
func seedTree(t *testing.T, ws string) {
	t.Helper()
	for i, rel := range []string{"archive/a.ts", "archive/b.ts", "archive/c.ts", "docs/guide.md", "src/index.ts", "test/spec.ts", "top.txt", "notes.md"} {
		p := filepath.Join(ws, "tree", rel)
		harness.MustWrite(t, p, "fixture\n")
		at := time.Date(2000, 1, 1, 0, 0, 0, (i+1)*int(time.Millisecond), time.Local)
		if err := os.Chtimes(p, at, at); err != nil {
			t.Fatal(err)
		}
	}
}

type rig struct {
	t     *testing.T
	ws    string
	agent *pipeline.Agent
	reg   *pipeline.Registry
}

func newRig(t *testing.T, cfg Config) *rig {
	t.Helper()
	needRg(t)
	ws := t.TempDir()
	tools, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	reg := pipelinetest.Registry(t, toolreg.Defs(tools...)...)
	return &rig{t: t, ws: ws, agent: &pipeline.Agent{ID: "root", Session: sessiontest.New(t, "s1", ws)}, reg: reg}
}

func (r *rig) call(name, args string) pipeline.Result {
	return r.reg.Execute(pipeline.NewCall("c1", name, json.RawMessage(args), r.agent, context.Background()))
}

func (r *rig) put(rel, content string) {
	r.t.Helper()
	harness.MustWrite(r.t, filepath.Join(r.ws, rel), content)
}

// TestGlobSamplingAsRecorded is the recorded fs-glob-sampling call.
func TestGlobSamplingAsRecorded(t *testing.T) {
	r := newRig(t, Config{SampleOverCapGlobResults: true, GlobMaxResults: 4})
	seedTree(t, r.ws)
	res := r.call(GlobName, `{"pattern": "*", "path": "tree"}`)
	want := "tree/archive/a.ts\ntree/docs/guide.md\ntree/src/index.ts\ntree/test/spec.ts\n\n(Showing 4 of 8 paths, sampled across 4 of the 6 top-level entries this pattern matched instead of taken in modification-time order. Narrow path to inspect a specific subtree. The complete result could not be saved; narrow pattern or path to see more.)"
	if res.IsError || res.Text() != want {
		t.Fatalf("got %q\nwant %q", res.Text(), want)
	}
	if string(res.Meta) != `{"shape":"paths","paths":["tree/archive/a.ts","tree/docs/guide.md","tree/src/index.ts","tree/test/spec.ts"],"truncated":true,"total":8}` {
		t.Fatalf("meta %s", res.Meta)
	}
}

func TestGlobRenders(t *testing.T) {
	saveTo := func(calls *[]string) SaveFunc {
		return func(_ *pipeline.Call, name, content string) (Saved, bool) {
			*calls = append(*calls, name+"="+content)
			return Saved{Locator: "/spill/x-" + name, RetrievalHint: "Use read."}, true
		}
	}
	var saved []string
	for _, tc := range []struct {
		name string
		cfg  Config
		args string
		want string
	}{
		{"head without sampling", Config{GlobMaxResults: 3}, `{"pattern":"*","path":"tree"}`,
			"tree/archive/a.ts\ntree/archive/b.ts\ntree/archive/c.ts\n\n(Showing 3 of 8 paths. The complete result could not be saved; narrow pattern or path to see more.)"},
		{"within the cap", Config{GlobMaxResults: 8, SampleOverCapGlobResults: true}, `{"pattern":"*.ts","path":"tree"}`,
			"tree/archive/a.ts\ntree/archive/b.ts\ntree/archive/c.ts\ntree/src/index.ts\ntree/test/spec.ts"},
		{"cap is inclusive", Config{GlobMaxResults: 5, SampleOverCapGlobResults: true}, `{"pattern":"*.ts","path":"tree"}`,
			"tree/archive/a.ts\ntree/archive/b.ts\ntree/archive/c.ts\ntree/src/index.ts\ntree/test/spec.ts"},
		{"every entry sampled: no narrowing hint", Config{GlobMaxResults: 7, SampleOverCapGlobResults: true}, `{"pattern":"*","path":"tree"}`,
			"tree/archive/a.ts\ntree/archive/b.ts\ntree/docs/guide.md\ntree/src/index.ts\ntree/test/spec.ts\ntree/top.txt\ntree/notes.md\n\n(Showing 7 of 8 paths, sampled across 6 of the 6 top-level entries this pattern matched instead of taken in modification-time order. The complete result could not be saved; narrow pattern or path to see more.)"},
		{"flat result keeps the plain footer", Config{GlobMaxResults: 1, SampleOverCapGlobResults: true}, `{"pattern":"*.ts","path":"tree/archive"}`,
			"tree/archive/a.ts\n\n(Showing 1 of 3 paths. The complete result could not be saved; narrow pattern or path to see more.)"},
		{"no path: workspace root", Config{GlobMaxResults: 2, SampleOverCapGlobResults: true}, `{"pattern":"*.md"}`,
			"tree/docs/guide.md\ntree/notes.md"},
		{"nothing", Config{}, `{"pattern":"*.rs"}`, "No files found"},
		{"saved result", Config{GlobMaxResults: 1, Save: saveTo(&saved)}, `{"pattern":"*.md","path":"tree"}`,
			"tree/docs/guide.md\n\n(Showing 1 of 2 paths. Full sorted result stored at: /spill/x-glob-results.txt. Use read.)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, tc.cfg)
			seedTree(t, r.ws)
			res := r.call(GlobName, tc.args)
			if res.IsError || res.Text() != tc.want {
				t.Fatalf("got %q\nwant %q", res.Text(), tc.want)
			}
		})
	}
	if len(saved) != 1 || saved[0] != "glob-results.txt=tree/docs/guide.md\ntree/notes.md" {
		t.Fatalf("saved %q", saved)
	}
}

func TestGlobExcludesVCSAndIncludesHidden(t *testing.T) {
	r := newRig(t, Config{})
	r.put(".git/config", "x")
	r.put("sub/.hg/store", "x")
	r.put(".hidden", "x")
	r.put("ignored.log", "x")
	r.put(".gitignore", "*.log\n")
	res := r.call(GlobName, `{"pattern":"*"}`)
	got := strings.Split(res.Text(), "\n")
	have := map[string]bool{}
	for _, g := range got {
		have[g] = true
	}
	if !have[".hidden"] || !have["ignored.log"] || !have[".gitignore"] || have[".git/config"] || have["sub/.hg/store"] {
		t.Fatalf("listing %q", got)
	}
	// The search root inside a VCS directory still excludes its contents.
	if res := r.call(GlobName, `{"pattern":"*","path":".git"}`); res.Text() != "No files found" {
		t.Fatalf("inside .git: %q", res.Text())
	}
}

func TestSearchFailures(t *testing.T) {
	r := newRig(t, Config{})
	r.put("a.txt", "alpha\n")
	for _, tc := range []struct {
		name, tool, args, text, code string
	}{
		{"blank pattern", GlobName, `{"pattern":"  "}`, "Error: pattern must be a non-empty string", ""},
		{"blank path", GlobName, `{"pattern":"*","path":" "}`, "Error: path must be a non-empty string when given", ""},
		{"bad glob", GlobName, `{"pattern":"a{"}`, "Error: glob pattern rejected by ripgrep: ", CodeInvalidPattern},
		{"missing root", GlobName, `{"pattern":"*","path":"nope"}`, "Error: glob search failed (exit 2): ", CodeFailed},
		{"empty grep pattern", GrepName, `{"pattern":""}`, "Error: pattern must be a non-empty string", ""},
		{"bad regex", GrepName, `{"pattern":"a("}`, "Error: grep pattern rejected by ripgrep: ", CodeInvalidPattern},
		{"blank include", GrepName, `{"pattern":"a","include":" "}`, "Error: include must be a non-empty glob when given", ""},
		{"negated include", GrepName, `{"pattern":"a","include":"!*.ts"}`, `Error: include must be a positive glob filter; negated patterns ("!…") are not supported`, ""},
		{"include list", GrepName, `{"pattern":"a","include":"*.ts,*.js"}`, "Error: include must be one glob, not a comma-separated list (use {a,b} alternation instead)", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := r.call(tc.tool, tc.args)
			if !res.IsError || !strings.HasPrefix(res.Text(), tc.text) {
				t.Fatalf("got %+v, want text starting %q", res, tc.text)
			}
			var code string
			if res.Error != nil && res.Error.Info != nil {
				code = res.Error.Info.Code
				if res.Error.Info.Name != ErrorName {
					t.Fatalf("name %q", res.Error.Info.Name)
				}
			}
			if code != tc.code {
				t.Fatalf("code %q, want %q", code, tc.code)
			}
		})
	}
	// Alternation inside braces is one glob.
	if res := r.call(GrepName, `{"pattern":"alpha","include":"*.{txt,md}"}`); res.IsError || res.Text() != "Found 1 match\n\na.txt\nLine 1: alpha" {
		t.Fatalf("brace include: %+v", res)
	}
	// A cancelled call answers SEARCH_ABORTED without running.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res := r.reg.Execute(pipeline.NewCall("c9", GlobName, json.RawMessage(`{"pattern":"*"}`), r.agent, ctx))
	if !res.IsError {
		t.Fatalf("cancelled call ran: %+v", res)
	}
}

func TestGrep(t *testing.T) {
	r := newRig(t, Config{GrepMaxMatches: 3, GrepMaxLineBytes: 8})
	r.put("one.txt", "needle one\nhay\nneedle two\n")
	r.put("b/two.txt", "needle€\r\n")
	r.put("bin.dat", "needle \xff\xfe\n")
	res := r.call(GrepName, `{"pattern":"needle","path":"one.txt"}`)
	if res.Text() != "Found 2 matches\n\none.txt\nLine 1: needle o (line truncated)\nLine 3: needle t (line truncated)" {
		t.Fatalf("one file: %q", res.Text())
	}
	if string(res.Meta) != `{"shape":"matches","files":[{"path":"one.txt","matches":[{"lineNumber":1,"line":"needle o (line truncated)"},{"lineNumber":3,"line":"needle t (line truncated)"}]}],"truncated":false,"total":2}` {
		t.Fatalf("meta %s", res.Meta)
	}
	// "needle€" is 9 bytes: the 8-byte cut falls inside €, so 6 are kept
	// (and the CRLF is not part of the line).
	if res := r.call(GrepName, `{"pattern":"needle","path":"b"}`); res.Text() != "Found 1 match\n\nb/two.txt\nLine 1: needle (line truncated)" {
		t.Fatalf("utf-8 cut: %q", res.Text())
	}
	if res := r.call(GrepName, `{"pattern":"needle","path":"bin.dat","include":"*.dat"}`); res.IsError || res.Text() != "Found 1 match\n\nbin.dat\nLine 1: (line is (line truncated)" {
		t.Fatalf("invalid utf-8: %q", res.Text())
	}
	over := r.call(GrepName, `{"pattern":"needle|hay","path":"one.txt"}`)
	if over.Text() != "Found 3 matches\n\none.txt\nLine 1: needle o (line truncated)\nLine 2: hay\nLine 3: needle t (line truncated)" {
		t.Fatalf("at cap: %q", over.Text())
	}
	r.put("many.txt", "needle\nneedle\nneedle\nneedle\n")
	capped := r.call(GrepName, `{"pattern":"needle","path":"many.txt"}`)
	if capped.Text() != "Found 3 of 4 matches\n\nmany.txt\nLine 1: needle\nLine 2: needle\nLine 3: needle\n\n(The complete result could not be saved; narrow pattern, path, or include to see more.)" {
		t.Fatalf("capped: %q", capped.Text())
	}
	if none := r.call(GrepName, `{"pattern":"absent"}`); none.IsError || none.Text() != "No matches found" {
		t.Fatalf("none: %+v", none)
	}
}

// TestOnlyATopLevelCappedSearchSaves pins who saves a capped result: a
// top-level grep or glob over its cap saves the complete list; the same call
// nested in another (a run_code sub-call) saves nothing and says so.
func TestOnlyATopLevelCappedSearchSaves(t *testing.T) {
	var saved []string
	save := func(_ *pipeline.Call, name, content string) (Saved, bool) {
		saved = append(saved, name+"="+content)
		return Saved{Locator: "/spill/x-" + name, RetrievalHint: "Use read."}, true
	}
	r := newRig(t, Config{GrepMaxMatches: 2, GlobMaxResults: 1, Save: save})
	r.put("many.txt", "needle\nneedle\nneedle\n")
	r.put("a.md", "")
	r.put("b.md", "")
	// Distinct times, the first file the older: files written within one
	// clock tick share their mtime, and the listing's order of a tie is rg's.
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(filepath.Join(r.ws, "a.md"), old, old); err != nil {
		t.Fatal(err)
	}
	outer := pipeline.NewCall("c0", "run_code", json.RawMessage(`{}`), r.agent, context.Background())
	for _, tc := range []struct {
		name, tool, args, top, nested string
	}{
		{"grep", GrepName, `{"pattern":"needle","path":"many.txt"}`,
			"Found 2 of 3 matches\n\nmany.txt\nLine 1: needle\nLine 2: needle\n\n(Full grep result stored at: /spill/x-grep-results.txt. Use read.)",
			"Found 2 of 3 matches\n\nmany.txt\nLine 1: needle\nLine 2: needle\n\n(The complete result could not be saved; narrow pattern, path, or include to see more.)"},
		{"glob", GlobName, `{"pattern":"*.md"}`,
			"a.md\n\n(Showing 1 of 2 paths. Full sorted result stored at: /spill/x-glob-results.txt. Use read.)",
			"a.md\n\n(Showing 1 of 2 paths. The complete result could not be saved; narrow pattern or path to see more.)"},
	} {
		saved = nil
		if res := r.call(tc.tool, tc.args); res.IsError || res.Text() != tc.top {
			t.Fatalf("%s, top level: %q\nwant %q", tc.name, res.Text(), tc.top)
		}
		if len(saved) != 1 {
			t.Fatalf("%s, top level: saved %q, want one file", tc.name, saved)
		}
		saved = nil
		sub := pipeline.NewSubCall(outer, "c1", tc.tool, json.RawMessage(tc.args), context.Background())
		if res := r.reg.Execute(sub); res.IsError || res.Text() != tc.nested {
			t.Fatalf("%s, nested: %q\nwant %q", tc.name, res.Text(), tc.nested)
		}
		if len(saved) != 0 {
			t.Fatalf("%s, nested: saved %q", tc.name, saved)
		}
	}
}

func TestParseMatchesRefusesMalformed(t *testing.T) {
	for _, bad := range []string{
		"not json",
		`{"type":"match"}`,
		`{"type":"match","data":{"line_number":1,"lines":{"text":"x"}}}`,
		`{"type":"match","data":{"path":{"text":"a"},"lines":{"text":"x"}}}`,
		`{"type":"match","data":{"path":{"text":"a"},"line_number":1}}`,
		`{"type":"match","data":{"path":{"text":"a"},"line_number":1,"lines":{}}}`,
	} {
		if _, err := ParseMatches(bad); err == nil || !strings.HasPrefix(err.Error(), "grep received malformed ripgrep --json output (") {
			t.Errorf("%s: %v", bad, err)
		}
	}
	ms, err := ParseMatches(`{"type":"begin","data":{}}` + "\n" + `{"type":"match","data":{"path":{"text":"a"},"line_number":2,"lines":{"bytes":"/w=="}}}`)
	if err != nil || len(ms) != 1 || ms[0].Line != "(line is not valid UTF-8)" || ms[0].LineNumber != 2 {
		t.Fatalf("bytes line: %+v %v", ms, err)
	}
}

func TestSampleAcrossTopLevel(t *testing.T) {
	paths := []string{"r/a/1", "r/a/2", "r/a/3", "r/b/1", "r/c", "r/b/2"}
	for _, tc := range []struct {
		max   int
		items string
		shown int
	}{
		{1, "r/a/1", 1},
		{3, "r/a/1 r/b/1 r/c", 3},
		{4, "r/a/1 r/a/2 r/b/1 r/c", 3},
		{5, "r/a/1 r/a/2 r/b/1 r/b/2 r/c", 3},
		{9, "r/a/1 r/a/2 r/a/3 r/b/1 r/b/2 r/c", 3},
	} {
		s := SampleAcrossTopLevel(paths, tc.max, "r")
		if strings.Join(s.Items, " ") != tc.items || s.Shown != tc.shown || s.Total != 3 {
			t.Errorf("max %d: %+v", tc.max, s)
		}
	}
	if s := SampleAcrossTopLevel([]string{"./x/1", "y"}, 1, "."); s.Total != 2 || s.Items[0] != "./x/1" {
		t.Errorf("root .: %+v", s)
	}
}

func TestConfigRefusesNonPositiveCaps(t *testing.T) {
	if _, err := New(Config{GlobMaxResults: -1}); err == nil || err.Error() != "tool-fs-search: globMaxResults must be a positive integer" {
		t.Fatalf("%v", err)
	}
}
