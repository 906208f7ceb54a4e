package oracle

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/dshsim/dshsim/fsobserve"
	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/pipeline/session/sessiontest"
	"github.com/dshsim/dshsim/tools/editor"
)

// editorFiles is the workspace both editors start from.
var editorFiles = map[string]string{
	"note.txt": "a\n\tb\nc\n", "dup.txt": "x\ny\nx\n", "bin.dat": "ab\x00cd", "empty.txt": "", "crlf.txt": "one\r\ntwo\r\n",
	"dir/b.txt": "b", "dir/A.txt": "A", "dir/é.txt": "e", "dir/Z.txt": "Z", "dir/_u.txt": "u", "dir/.hidden/h": "h",
	"dir/node_modules/m": "m", "dir/__pycache__/p": "p", "dir/sub/s.txt": "s", "dir/sub/deep/deeper/x.txt": "x",
	"latin.txt": "bad \xff byte\n", "big.txt": strings.Repeat("line\n", 200),
}

// editorCalls are the calls both editors get, in order (<ws> is the
// workspace): every command, each of its checks and texts.
const editorCalls = `[
{"command":"view","path":"<ws>/note.txt"},
{"command":"view","path":"<ws>/note.txt","view_range":[2,3]},
{"command":"view","path":"<ws>/note.txt","view_range":[2,-1]},
{"command":"view","path":"<ws>/note.txt","view_range":[0,1]},
{"command":"view","path":"<ws>/note.txt","view_range":[1,9]},
{"command":"view","path":"<ws>/note.txt","view_range":[3,2]},
{"command":"view","path":"<ws>/note.txt","view_range":[4,4]},
{"command":"view","path":"<ws>/note.txt","view_range":[5,5]},
{"command":"view","path":"<ws>/note.txt","view_range":[1]},
{"command":"view","path":"<ws>/note.txt","view_range":[1,-3]},
{"command":"view","path":"<ws>/dir"},
{"command":"view","path":"<ws>/dir/"},
{"command":"view","path":"<ws>/dir","view_range":[1,2]},
{"command":"view","path":"<ws>/missing"},
{"command":"view","path":"note.txt"},
{"command":"view","path":""},
{"command":"view","path":"  "},
{"command":"view","path":"<ws>/bin.dat"},
{"command":"view","path":"<ws>/dir/link.txt"},
{"command":"view","path":"<ws>/dir/broken"},
{"command":"view","path":"/dev/null"},
{"command":"view","path":"<ws>/empty.txt"},
{"command":"view","path":"<ws>/crlf.txt"},
{"command":"view","path":"<ws>/latin.txt"},
{"command":"view","path":"<ws>/note.txt/x"},
{"command":"view","path":"<ws>/./dir/../note.txt"},
{"command":"create","path":"<ws>/note.txt","file_text":"x"},
{"command":"create","path":"<ws>/new/sub/f.txt","file_text":"made"},
{"command":"create","path":"<ws>/nf.txt"},
{"command":"create","path":"<ws>/dir","file_text":"x"},
{"command":"create","path":"<ws>/note.txt/x","file_text":"x"},
{"command":"create","path":"rel.txt","file_text":"x"},
{"command":"create","path":"<ws>/e2.txt","file_text":""},
{"command":"str_replace","path":"<ws>/note.txt"},
{"command":"str_replace","path":"<ws>/note.txt","old_str":""},
{"command":"str_replace","path":"<ws>/note.txt","old_str":"zzz","new_str":"q"},
{"command":"str_replace","path":"<ws>/dup.txt","old_str":"x","new_str":"q"},
{"command":"str_replace","path":"<ws>/note.txt","old_str":"\tb"},
{"command":"str_replace","path":"<ws>/dir","old_str":"a"},
{"command":"str_replace","path":"<ws>/missing","old_str":"a"},
{"command":"str_replace","path":"<ws>/bin.dat","old_str":"a"},
{"command":"str_replace","path":"<ws>/crlf.txt","old_str":"one\ntwo","new_str":"x"},
{"command":"str_replace","path":"<ws>/crlf.txt","old_str":"one\r\ntwo","new_str":"x"},
{"command":"insert","path":"<ws>/note.txt","new_str":"q"},
{"command":"insert","path":"<ws>/note.txt","insert_line":1},
{"command":"insert","path":"<ws>/note.txt","insert_line":-1,"new_str":"q"},
{"command":"insert","path":"<ws>/note.txt","insert_line":99,"new_str":"q"},
{"command":"insert","path":"<ws>/note.txt","insert_line":0,"new_str":"top"},
{"command":"insert","path":"<ws>/note.txt","insert_line":4,"new_str":"end"},
{"command":"insert","path":"<ws>/dir","insert_line":0,"new_str":"x"},
{"command":"insert","path":"<ws>/bin.dat","insert_line":0,"new_str":"x"},
{"command":"view","path":"<ws>/note.txt"},
{"command":"view","path":"<ws>/crlf.txt"},
{"command":"view","path":"<ws>/new/sub/f.txt"}
]`

// editorWorkspace writes editorFiles and the links into a fresh
// directory.
func editorWorkspace(t *testing.T) string {
	t.Helper()
	ws, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for name, content := range editorFiles {
		p := filepath.Join(ws, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for link, to := range map[string]string{"dir/link.txt": "../note.txt", "dir/linkdir": "sub", "dir/broken": "nowhere"} {
		if err := os.Symlink(to, filepath.Join(ws, link)); err != nil {
			t.Fatal(err)
		}
	}
	return ws
}

// ourEditor answers calls as upstream's probe does, through the
// pipeline's argument check and the editor on the bare provider.
func ourEditor(t *testing.T, ws string, max int, calls string) []string {
	t.Helper()
	local, err := fsobserve.NewLocal(fsobserve.WithCwd(ws))
	if err != nil {
		t.Fatal(err)
	}
	regs, err := editor.New(editor.Config{FS: local, MaxOutputChars: max})
	if err != nil {
		t.Fatal(err)
	}
	tool, agent := regs[0].Def, &pipeline.Agent{ID: "a", Session: sessiontest.New(t, "s", ws)}
	var raws []json.RawMessage
	if err := json.Unmarshal([]byte(calls), &raws); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, raw := range raws {
		call := pipeline.NewCall("c", editor.Name, raw, agent, context.Background())
		err := pipeline.CheckArgs(tool, call)
		var o pipeline.Output
		if err == nil {
			o, err = tool.Run(context.Background(), call)
		}
		if err != nil {
			out = append(out, "err: "+err.Error())
			continue
		}
		var v string
		json.Unmarshal(o.Value, &v)
		out = append(out, "ok: "+v)
	}
	return out
}

// upstreamEditor answers calls with upstream's published editor.
func upstreamEditor(t *testing.T, o *Oracle, ws string, max int, calls string) []string {
	t.Helper()
	probe, err := filepath.Abs(filepath.Join("testdata", "editor-probe.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(o.node(), probe, o.Dir(), ws, strconv.Itoa(max), calls)
	cmd.Dir = ws
	outb, err := cmd.Output()
	if err != nil {
		t.Fatalf("upstream's editor: %v", err)
	}
	var out []string
	for _, line := range strings.Split(strings.TrimSuffix(string(outb), "\n"), "\n") {
		var r struct {
			OK  *string `json:"ok"`
			Err string  `json:"err"`
		}
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("upstream's editor printed %q: %v", line, err)
		}
		if r.OK != nil {
			out = append(out, "ok: "+*r.OK)
		} else {
			out = append(out, "err: "+r.Err)
		}
	}
	return out
}

// TestEditorTextsAreUpstreams runs the same calls through upstream's
// published str_replace_editor (on its bare fs-local provider) and ours,
// each on a fresh copy of the same workspace, and compares every answer
// and error text: views, ranges, listings, clipping, every check of every
// command, the argument checks. What clipping would split a surrogate
// pair is ours (a departure the editor's doc names), so no case clips one.
func TestEditorTextsAreUpstreams(t *testing.T) {
	o, err := FromEnv()
	if err != nil {
		t.Skip(err)
	}
	for _, c := range []struct {
		max   int
		calls string
	}{
		{16000, editorCalls},
		{120, `[{"command":"view","path":"<ws>/big.txt"},{"command":"view","path":"<ws>/dir"}]`},
		{16000, `[{"command":"insert","path":"<ws>/note.txt","insert_line":1.5,"new_str":"q"},{"command":"view","path":"<ws>/note.txt","view_range":[1.5,2]},{"command":"view","path":"<ws>/note.txt","view_range":"x"},{"command":"bogus","path":"<ws>/note.txt"},{"command":"view"},{"command":"view","path":5},{"command":"view","path":"<ws>/note.txt","view_range":[1,2,3]},{"command":"view","path":"<ws>/note.txt","view_range":[]},{"command":"create","path":"<ws>/q.txt","file_text":null}]`},
	} {
		wsUp, wsOurs := editorWorkspace(t), editorWorkspace(t)
		up := upstreamEditor(t, o, wsUp, c.max, strings.ReplaceAll(c.calls, "<ws>", wsUp))
		ours := ourEditor(t, wsOurs, c.max, strings.ReplaceAll(c.calls, "<ws>", wsOurs))
		if len(up) != len(ours) {
			t.Fatalf("upstream answered %d calls, ours %d", len(up), len(ours))
		}
		var calls []json.RawMessage
		json.Unmarshal([]byte(c.calls), &calls)
		for i := range up {
			u, g := strings.ReplaceAll(up[i], wsUp, "<ws>"), strings.ReplaceAll(ours[i], wsOurs, "<ws>")
			if u != g {
				t.Errorf("%s:\nupstream %q\nours     %q", calls[i], u, g)
			}
		}
	}
}
