package editor

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshsim/dshsim/fsobserve"
	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/pipeline/session/sessiontest"
	"github.com/dshsim/dshsim/sandbox"
)

// step is one call and what it answers: the text (an error's is
// "Error: <message>" as the log stores it) and the error's code.
type step struct {
	args string
	want string
	code string
}

// rig is the tool on a real provider over a real temp workspace, called
// by one agent with a real session log.
type rig struct {
	t     *testing.T
	ws    string
	tool  pipeline.Tool
	agent *pipeline.Agent
}

func newRig(t *testing.T, mode sandbox.Mode, max int, observed bool) *rig {
	t.Helper()
	ws, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	local, err := fsobserve.NewLocal(fsobserve.WithCwd(ws))
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{FS: local, MaxOutputChars: max}
	if observed {
		cfg.Observations = fsobserve.NewObservations()
	}
	if mode != "" {
		cfg.Policy = func(call *pipeline.Call) (sandbox.Policy, error) {
			return sandbox.Policy{Mode: mode, WorkspaceRoot: ws, SessionID: call.SessionID()}, nil
		}
	}
	regs, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return &rig{t: t, ws: ws, tool: regs[0].Def, agent: &pipeline.Agent{ID: "a", Session: sessiontest.New(t, "s", ws)}}
}

// call runs one call as the pipeline would (schema check, then the body)
// and renders it with the workspace as <ws>.
func (r *rig) call(args string) (text, code string) {
	args = strings.ReplaceAll(args, "<ws>", r.ws)
	call := pipeline.NewCall("c", Name, json.RawMessage(args), r.agent, context.Background())
	out, err := func() (pipeline.Output, error) {
		if err := pipeline.CheckArgs(r.tool, call); err != nil {
			return pipeline.Output{}, err
		}
		return r.tool.Run(context.Background(), call)
	}()
	if err != nil {
		_, code, _ = pipeline.CodeOf(err)
		return strings.ReplaceAll("Error: "+pipeline.ErrorMessage(err), r.ws, "<ws>"), code
	}
	var b strings.Builder
	for _, c := range out.Content {
		b.WriteString(c.Text)
	}
	return strings.ReplaceAll(b.String(), r.ws, "<ws>"), ""
}

func (r *rig) put(rel, content string) {
	r.t.Helper()
	p := filepath.Join(r.ws, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		r.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		r.t.Fatal(err)
	}
}

func TestEditorCommands(t *testing.T) {
	const note = "target:\n\told\n"
	cases := []struct {
		name     string
		mode     sandbox.Mode
		max      int
		bare     bool
		files    map[string]string
		steps    []step
		wantFile map[string]string
	}{
		{name: "the recording's create, view and replace", files: nil, steps: []step{
			{args: `{"command":"create","path":"<ws>/note.txt","file_text":"target:\n\told\n"}`, want: "New file created successfully at: <ws>/note.txt"},
			{args: `{"command":"view","path":"<ws>/note.txt"}`, want: "Here's the content of <ws>/note.txt with line numbers (which has a total of 3 lines):\n     1  target:\n     2  \told\n     3  \n"},
			{args: `{"command":"str_replace","path":"<ws>/note.txt","old_str":"\told","new_str":"\tnew"}`, want: "The file <ws>/note.txt has been edited successfully."},
		}, wantFile: map[string]string{"note.txt": "target:\n\tnew\n"}},
		{name: "an edit needs an observation first", files: map[string]string{"note.txt": note}, steps: []step{
			{args: `{"command":"str_replace","path":"<ws>/note.txt","old_str":"old","new_str":"new"}`, want: `Error: edit requires reading "<ws>/note.txt" first`, code: "FS_NOT_OBSERVED"},
			{args: `{"command":"insert","path":"<ws>/note.txt","insert_line":0,"new_str":"x"}`, want: `Error: edit requires reading "<ws>/note.txt" first`, code: "FS_NOT_OBSERVED"},
		}, wantFile: map[string]string{"note.txt": note}},
		{name: "the bare provider edits at the version it reads", bare: true, files: map[string]string{"note.txt": note}, steps: []step{
			{args: `{"command":"str_replace","path":"<ws>/note.txt","old_str":"old","new_str":"new"}`, want: "The file <ws>/note.txt has been edited successfully."},
		}, wantFile: map[string]string{"note.txt": "target:\n\tnew\n"}},
		{name: "a missing path is observed absent", steps: []step{
			{args: `{"command":"view","path":"<ws>/gone.txt"}`, want: "Error: The path <ws>/gone.txt does not exist. Please provide a valid path.", code: "FS_NOT_FOUND"},
			{args: `{"command":"str_replace","path":"<ws>/gone.txt","old_str":"a"}`, want: `Error: cannot edit "<ws>/gone.txt": not found`, code: "FS_NOT_FOUND"},
		}},
		{name: "path checks", steps: []step{
			{args: `{"command":"view","path":"note.txt"}`, want: "Error: The path note.txt is not an absolute path, it should start with `/`. Maybe you meant /note.txt?"},
			{args: `{"command":"view","path":" \u00a0"}`, want: "Error: path must be a non-empty string"},
			{args: `{"command":"create","path":"<ws>/d"}`, want: "Error: Parameter `file_text` is required for command: create"},
		}},
		{name: "create never overwrites", files: map[string]string{"note.txt": note}, steps: []step{
			{args: `{"command":"create","path":"<ws>/note.txt","file_text":"x"}`, want: "Error: File already exists at: <ws>/note.txt. Cannot overwrite files using command `create`."},
		}, wantFile: map[string]string{"note.txt": note}},
		{name: "replace: empty, absent and ambiguous old_str", files: map[string]string{"a.txt": "x\ny\nx\n"}, steps: []step{
			{args: `{"command":"view","path":"<ws>/a.txt"}`, want: "Here's the content of <ws>/a.txt with line numbers (which has a total of 4 lines):\n     1  x\n     2  y\n     3  x\n     4  \n"},
			{args: `{"command":"str_replace","path":"<ws>/a.txt","old_str":""}`, want: "Error: Parameter `old_str` is empty for command: str_replace"},
			{args: `{"command":"str_replace","path":"<ws>/a.txt","old_str":"z"}`, want: "Error: No replacement was performed, old_str `z` did not appear verbatim in <ws>/a.txt.", code: "FS_EDIT_NOT_FOUND"},
			{args: `{"command":"str_replace","path":"<ws>/a.txt","old_str":"x"}`, want: "Error: No replacement was performed. Multiple occurrences of old_str `x` in lines [1, 3]. Please ensure it is unique", code: "FS_AMBIGUOUS_EDIT"},
			{args: `{"command":"str_replace","path":"<ws>/a.txt","old_str":"y\n"}`, want: "The file <ws>/a.txt has been edited successfully."},
		}, wantFile: map[string]string{"a.txt": "x\nx\n"}},
		{name: "view ranges", files: map[string]string{"a.txt": "1\n2\n3"}, steps: []step{
			{args: `{"command":"view","path":"<ws>/a.txt","view_range":[2,3]}`, want: "Here's the content of <ws>/a.txt with line numbers (which has a total of 3 lines) with view_range=[2, 3]:\n     2  2\n     3  3\n"},
			{args: `{"command":"view","path":"<ws>/a.txt","view_range":[2,-1]}`, want: "Here's the content of <ws>/a.txt with line numbers (which has a total of 3 lines) with view_range=[2, -1]:\n     2  2\n     3  3\n"},
			{args: `{"command":"view","path":"<ws>/a.txt","view_range":[3,3]}`, want: "Here's the content of <ws>/a.txt with line numbers (which has a total of 3 lines) with view_range=[3, 3]:\n     3  3\n"},
			{args: `{"command":"view","path":"<ws>/a.txt","view_range":[0,1]}`, want: "Error: Invalid `view_range`: [0, 1]. Its first element `0` should be within the range of lines of the file: [1, 3]"},
			{args: `{"command":"view","path":"<ws>/a.txt","view_range":[4,4]}`, want: "Error: Invalid `view_range`: [4, 4]. Its first element `4` should be within the range of lines of the file: [1, 3]"},
			{args: `{"command":"view","path":"<ws>/a.txt","view_range":[1,4]}`, want: "Error: Invalid `view_range`: [1, 4]. Its second element `4` should be smaller than the number of lines in the file: `3`"},
			{args: `{"command":"view","path":"<ws>/a.txt","view_range":[2,1]}`, want: "Error: Invalid `view_range`: [2, 1]. Its second element `1` should be larger or equal than its first `2`"},
			{args: `{"command":"view","path":"<ws>/a.txt","view_range":[1]}`, want: "Error: Invalid `view_range`. It should be a list of two integers."},
			{args: `{"command":"view","path":"<ws>","view_range":[1,2]}`, want: "Error: The `view_range` parameter is not allowed when `path` points to a directory."},
		}},
		{name: "insert bounds", files: map[string]string{"a.txt": "a\nb"}, steps: []step{
			{args: `{"command":"view","path":"<ws>/a.txt"}`, want: "Here's the content of <ws>/a.txt with line numbers (which has a total of 2 lines):\n     1  a\n     2  b\n"},
			{args: `{"command":"insert","path":"<ws>/a.txt","insert_line":3,"new_str":"x"}`, want: "Error: Invalid `insert_line` parameter: 3. It should be within the range of lines of the file: [0, 2]"},
			{args: `{"command":"insert","path":"<ws>/a.txt","insert_line":-1,"new_str":"x"}`, want: "Error: Invalid `insert_line` parameter: -1. It should be within the range of lines of the file: [0, 2]"},
			{args: `{"command":"insert","path":"<ws>/a.txt","insert_line":2,"new_str":"x\ny"}`, want: "The file <ws>/a.txt has been edited successfully."},
			{args: `{"command":"insert","path":"<ws>/a.txt","insert_line":0,"new_str":"0"}`, want: "The file <ws>/a.txt has been edited successfully."},
			{args: `{"command":"insert","path":"<ws>/a.txt","insert_line":0}`, want: "Error: Parameter `new_str` is required for command: insert"},
			{args: `{"command":"insert","path":"<ws>/a.txt","new_str":"0"}`, want: "Error: Parameter `insert_line` is required for command: insert"},
		}, wantFile: map[string]string{"a.txt": "0\na\nb\nx\ny"}},
		{name: "a file changed since it was viewed is stale", files: map[string]string{"a.txt": "a"}, steps: []step{
			{args: `{"command":"view","path":"<ws>/a.txt"}`, want: "Here's the content of <ws>/a.txt with line numbers (which has a total of 1 lines):\n     1  a\n"},
			{args: "put a.txt", want: ""},
			{args: `{"command":"str_replace","path":"<ws>/a.txt","old_str":"changed","new_str":"b"}`, want: `Error: cannot write "<ws>/a.txt": file changed since it was read`, code: "FS_STALE_VERSION"},
		}, wantFile: map[string]string{"a.txt": "changed"}},
		{name: "a directory: listing two levels deep, hidden and caches left out", files: map[string]string{"b/c/d/e.txt": "", "a.txt": "", ".h/x": "", "node_modules/m": "", "b/__pycache__/p": "", "b/z": ""}, steps: []step{
			{args: `{"command":"view","path":"<ws>/"}`, want: "Here're the files and directories up to 2 levels deep in <ws>, excluding hidden items, node_modules, and Python cache directories:\nd\t<ws>\nf\t<ws>/a.txt\nd\t<ws>/b\nd\t<ws>/b/c\nf\t<ws>/b/z\n\n"},
			// as upstream: the edit intent comes before the stat
			{args: `{"command":"str_replace","path":"<ws>/b","old_str":"x"}`, want: `Error: edit requires reading "<ws>/b" first`, code: "FS_NOT_OBSERVED"},
		}},
		{name: "a directory is edited by no command", bare: true, files: map[string]string{"b/z": ""}, steps: []step{
			{args: `{"command":"str_replace","path":"<ws>/b","old_str":"x"}`, want: "Error: The path <ws>/b is a directory and only the `view` command can be used on directories", code: "FS_NOT_REGULAR_FILE"},
			{args: `{"command":"insert","path":"<ws>/b","insert_line":0,"new_str":"x"}`, want: "Error: The path <ws>/b is a directory and only the `view` command can be used on directories", code: "FS_NOT_REGULAR_FILE"},
			{args: `{"command":"create","path":"<ws>/b","file_text":"x"}`, want: "Error: File already exists at: <ws>/b. Cannot overwrite files using command `create`."},
		}},
		{name: "read-only: every mutation denied", mode: sandbox.ReadOnly, files: map[string]string{"a.txt": "a"}, steps: []step{
			{args: `{"command":"create","path":"<ws>/new.txt","file_text":"x"}`, want: "Error: [sandbox: file access denied under read-only mode]", code: "FS_SANDBOX_DENIED"},
			{args: `{"command":"view","path":"<ws>/a.txt"}`, want: "Here's the content of <ws>/a.txt with line numbers (which has a total of 1 lines):\n     1  a\n"},
			{args: `{"command":"str_replace","path":"<ws>/a.txt","old_str":"a","new_str":"b"}`, want: "Error: [sandbox: file access denied under read-only mode]", code: "FS_SANDBOX_DENIED"},
		}, wantFile: map[string]string{"a.txt": "a"}},
		{name: "workspace-write: outside the workspace denied", mode: sandbox.WorkspaceWrite, steps: []step{
			{args: `{"command":"create","path":"/proc/self/dshsim-editor-probe","file_text":"x"}`, want: "Error: [sandbox: file access denied under workspace-write mode]", code: "FS_SANDBOX_DENIED"},
			{args: `{"command":"create","path":"<ws>/in.txt","file_text":"x"}`, want: "New file created successfully at: <ws>/in.txt"},
		}, wantFile: map[string]string{"in.txt": "x"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := newRig(t, c.mode, c.max, !c.bare)
			for rel, content := range c.files {
				r.put(rel, content)
			}
			for i, s := range c.steps {
				if rel, ok := strings.CutPrefix(s.args, "put "); ok {
					r.put(rel, "changed")
					continue
				}
				text, code := r.call(s.args)
				want := s.want
				if text != want || code != s.code {
					t.Errorf("step %d %s:\ngot  %q (code %q)\nwant %q (code %q)", i+1, s.args, text, code, want, s.code)
				}
			}
			for rel, want := range c.wantFile {
				got, err := os.ReadFile(filepath.Join(r.ws, rel))
				if err != nil || string(got) != want {
					t.Errorf("%s = %q (%v), want %q", rel, got, err, want)
				}
			}
		})
	}
}

func TestEditorSchemaAndConfig(t *testing.T) {
	local, err := fsobserve.NewLocal(fsobserve.WithCwd(t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	regs, err := New(Config{FS: local})
	if err != nil {
		t.Fatal(err)
	}
	d := regs[0].Def
	if d.Description != DefaultDescription || !regs[0].SafetyStack || !json.Valid(d.Parameters) {
		t.Errorf("registration: description default %v, safety stack %v, valid schema %v", d.Description == DefaultDescription, regs[0].SafetyStack, json.Valid(d.Parameters))
	}
	for _, bad := range []Config{{}, {FS: local, MaxOutputChars: -1}, {FS: local, Description: " \n"}} {
		if _, err := New(bad); err == nil {
			t.Errorf("New(%+v) accepted", bad)
		}
	}
}

func TestClipCountsUTF16Units(t *testing.T) {
	for _, c := range []struct {
		s    string
		max  int
		want string
	}{
		{"abc", 3, "abc"},
		{"abcd", 3, "abc" + TruncatedMessage},
		{"😀😀", 4, "😀😀"},
		{"😀😀", 3, "😀" + TruncatedMessage},
		{"a😀", 2, "a" + TruncatedMessage},
	} {
		if got := clip(c.s, c.max); got != c.want {
			t.Errorf("clip(%q, %d) = %q, want %q", c.s, c.max, got, c.want)
		}
	}
}
