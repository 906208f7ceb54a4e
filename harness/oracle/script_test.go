package oracle

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/dshsim/dshsim/harness/replay/recording"
)

// root is the repository, from this package's directory.
const root = "../.."

// TestArgumentsText: arguments are spelled as Python's json.dumps spelled
// them (the texts of every recording made so far); a value that is not JSON
// is sent as it is.
func TestArgumentsText(t *testing.T) {
	tests := []struct{ in, want string }{
		{`{"command":"echo x","description":"d"}`, `{"command": "echo x", "description": "d"}`},
		{`{"b":1,"a":[1,2,{}],"c":[]}`, `{"b": 1, "a": [1, 2, {}], "c": []}`},
		{`{"n":1.5,"big":9007199254740992,"neg":-5,"t":true,"f":false,"z":null}`, `{"n": 1.5, "big": 9007199254740992, "neg": -5, "t": true, "f": false, "z": null}`},
		{`{"s":"caf\u00e9 \ud83d\ude00 <&> \u007f"}`, `{"s": "caf\u00e9 \ud83d\ude00 <&> \u007f"}`},
		{`{"s":"q\" b\\ n\n r\r t\t b\b f\f nul\u0000 \u001b"}`, `{"s": "q\" b\\ n\n r\r t\t b\b f\f nul\u0000 \u001b"}`},
		{`{"s":"\ufeffbom"}`, `{"s": "\ufeffbom"}`},
		{`not json`, `not json`},
		{`{"a":1} trailing`, `{"a":1} trailing`},
	}
	for _, tc := range tests {
		if got := ArgumentsText(json.RawMessage(tc.in)); got != tc.want {
			t.Errorf("ArgumentsText(%s) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

// TestEncodeReproducesTheKeptRecordings: every script in gen/specs encodes
// to exactly the model chunks and input of its recording under
// testdata/replay/oracle (upstream's refresh keeps both), each child
// session's too (session.<n>.jsonl, its calls numbered after the
// session's), so the Go encoder is the one the recordings were made with;
// a script replaced whole by replay.override.json encodes to that file.
func TestEncodeReproducesTheKeptRecordings(t *testing.T) {
	specs, err := filepath.Glob("gen/specs/*.json")
	if err != nil || len(specs) == 0 {
		t.Fatalf("no specs (%v)", err)
	}
	compared := 0
	for _, spec := range specs {
		name := strings.TrimSuffix(filepath.Base(spec), ".json")
		rec := filepath.Join(root, "testdata", "replay", "oracle", name)
		if _, err := os.Stat(rec); err != nil {
			continue // a racy script upstream does not reproduce: not kept
		}
		t.Run(name, func(t *testing.T) {
			s, err := LoadScript(spec)
			if err != nil {
				t.Fatal(err)
			}
			files, err := s.Encode()
			if err != nil {
				t.Fatal(err)
			}
			want, err := os.ReadFile(filepath.Join(rec, recording.SessionFile))
			if err != nil {
				t.Fatal(err)
			}
			if isArray(s.Override) {
				// a whole replacement script is the model's: the log holds
				// what upstream's log accepted of it (a chunk holding 1e999
				// it refuses), so the override itself is compared
				kept, err := os.ReadFile(filepath.Join(rec, recording.OverrideFile))
				if err != nil || string(kept) != string(files[recording.OverrideFile]) {
					t.Errorf("replay.override.json differs from the encoded one (%v):\n%s\n%s", err, kept, files[recording.OverrideFile])
				}
			} else if diff := cmp.Diff(chunks(t, want), chunks(t, files[recording.SessionFile])); diff != "" {
				t.Errorf("model chunks differ (-recording +encoded):\n%s", diff)
			}
			for i := range s.Children {
				name := recording.ChildFile(i + 1)
				want, err := os.ReadFile(filepath.Join(rec, name))
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(chunks(t, want), chunks(t, files[name])); diff != "" {
					t.Errorf("%s: model chunks differ (-recording +encoded):\n%s", name, diff)
				}
			}
			if _, err := os.Stat(filepath.Join(rec, recording.ChildFile(len(s.Children)+1))); err == nil {
				t.Errorf("the recording has more child sessions than the script's %d", len(s.Children))
			}
			var wantIn, gotIn any
			readJSON(t, filepath.Join(rec, recording.InputFile), &wantIn)
			if err := json.Unmarshal(files[recording.InputFile], &gotIn); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(wantIn, gotIn); diff != "" {
				t.Errorf("input.json differs (-recording +encoded):\n%s", diff)
			}
			for p, content := range s.Workspace {
				if got := files[filepath.Join(recording.WorkspaceDir, p)]; string(got) != content {
					t.Errorf("workspace/%s: encoded %q, want %q", p, got, content)
				}
			}
		})
		compared++
	}
	if compared < 50 {
		t.Errorf("compared %d scripts with their recordings, want the fifty-odd kept", compared)
	}
}

// chunks are the data of a log's assistant/chunk events, in order.
func chunks(t *testing.T, log []byte) []any {
	t.Helper()
	var out []any
	sc := bufio.NewScanner(bytes.NewReader(log))
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var e struct {
			Type string `json:"type"`
			Data any    `json:"data"`
		}
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatal(err)
		}
		if e.Type == "assistant/chunk" {
			out = append(out, e.Data)
		}
	}
	return out
}

func readJSON(t *testing.T, file string, v any) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
}

// TestScriptCheck: a script without a model step, input or a usable call or
// chunk, or one mixing the forms, is refused with the field named; the forms
// the kept specs use are accepted.
func TestScriptCheck(t *testing.T) {
	tests := []struct{ spec, want string }{
		{`{"prompts":["p"],"turns":[]}`, "turns: no model step"},
		{`{"prompts":["p"],"turns":[[]]}`, "turns: no model step"},
		{`{"prompts":["p"],"turns":[[],[]]}`, "turns: no model step"},
		{`{"turns":[[{"text":"x"}]]}`, "prompts: neither"},
		{`{"prompts":["p"],"turns":[[{"calls":[["bash"]]}]]}`, "a call is [name, arguments]"},
		{`{"prompts":["p"],"turns":[[{"calls":[["",{}]]}]]}`, "non-empty string"},
		{`{"prompts":["p"],"turns":[[{"text":"x"}]],"workspace":{"../x":""}}`, `workspace: "../x"`},
		{`{"prompts":["p"],"turns":[[{"text":"x"}]],"extra":1}`, `unknown field "extra"`},
		{`{"prompts":["p"],"turns":[[{"text":"x","calls":[["read",{}]]}]]}`, "turns[0][0]: calls and text"},
		{`{"prompts":["p"],"turns":[[{"text":"x"}],[{"chunks":[{"type":"finish"}],"calls":[["read",{}]]}]]}`, "turns[1][0]: chunks go alone"},
		{`{"prompts":["p"],"turns":[[{"chunks":[{"type":"finish"}],"text":"x"}]]}`, "turns[0][0]: chunks go alone"},
		{`{"prompts":["p"],"turns":[[{"chunks":[{"type":"usage"},[1]]}]]}`, "turns[0][0].chunks[1]: not a chunk"},
		{`{"prompts":["p"],"turns":[[{"chunks":[{"index":0}]}]]}`, "turns[0][0].chunks[0]: not a chunk"},
		{`{"prompts":["p"],"turns":[[{"chunks":[{"type":""}]}]]}`, "turns[0][0].chunks[0]: not a chunk"},
		{`{"prompts":["p"],"turns":[[{"chunks":[null]}]]}`, "turns[0][0].chunks[0]: not a chunk"},
		{`{"allSteps":[{"op":"initialize"}],"prompts":["p"],"turns":[]}`, "allSteps: every input step is given"},
		{`{"allSteps":[{"op":"initialize"}],"steps":[{"op":"prompt","text":"p"}],"turns":[]}`, "allSteps: every input step is given"},
		{`{"allSteps":[{"op":"initialize"},{"op":"newSessionExpectError"}],"turns":[[{"text":"x"}]]}`, "turns: allSteps opens no session"},
		{`{"allSteps":[{"op":"initialize"},{"op":"newSessionExpectError"}],"turns":[[]]}`, "turns: allSteps opens no session"},
		{`{"allSteps":[{"op":"initialize"},{"op":"newSession"},{"op":"prompt","text":"p"}],"turns":[]}`, "turns: no model step"},
		{`{"prompts":["p"],"turns":[[{"text":"x"}]],"override":"x"}`, "override: not a JSON array or object"},
		{`{"prompts":["p"],"turns":[[{"text":"x"}]],"override":null}`, "override: not a JSON array or object"},
		{`{"prompts":["p"],"turns":[[{"text":"x"}]],"children":[{"turns":[]}]}`, "children[0].turns: no turn"},
		{`{"prompts":["p"],"turns":[[{"text":"x"}]],"children":[{"parent":1,"turns":[[{"text":"y"}]]}]}`, "children[0].parent: 1 is not the session (0) or an earlier child (1 to 0)"},
		{`{"prompts":["p"],"turns":[[{"text":"x"}]],"children":[{"turns":[[{"text":"y"}]]},{"parent":-1,"turns":[[{"text":"z"}]]}]}`, "children[1].parent: -1"},
		{`{"prompts":["p"],"turns":[[{"text":"x"}]],"children":[{"turns":[[{"text":"y","calls":[["read",{}]]}]]}]}`, "children[0].turns[0][0]: calls and text"},
	}
	for _, tc := range tests {
		_, err := ParseScript([]byte(tc.spec))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseScript(%s) = %v, want an error containing %q", tc.spec, err, tc.want)
		}
	}
	for _, ok := range []string{
		`{"prompts":["p","q"],"turns":[[],[{"text":"x"}]]}`,
		`{"prompts":["p"],"turns":[[{"chunks":[{"type":"finish","reason":{"kind":"max-tokens"}}]},{"calls":[["read",{}]]},{"text":"x"}]]}`,
		`{"allSteps":[{"op":"initialize"},{"op":"newSessionExpectError","additionalDirectories":["/x"]}],"turns":[]}`,
		`{"allSteps":[{"op":"initialize"},{"op":"newSession"},{"op":"prompt","text":"p"}],"turns":[[{"text":"x"}]]}`,
		`{"prompts":["p"],"turns":[[{"text":"x"}]],"override":{"patches":[]}}`,
		`{"prompts":["p"],"turns":[[{"text":"x"}]],"override":[]}`,
	} {
		if _, err := ParseScript([]byte(ok)); err != nil {
			t.Errorf("ParseScript(%s): %v", ok, err)
		}
	}
}

// encodedChunks are the encoded log's chunk events as compact JSON lines
// of data (turn, step, chunk).
func encodedChunks(t *testing.T, spec string) ([]string, map[string][]byte) {
	t.Helper()
	s, err := ParseScript([]byte(spec))
	if err != nil {
		t.Fatal(err)
	}
	files, err := s.Encode()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, c := range chunks(t, files[recording.SessionFile]) {
		b, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, string(b))
	}
	return out, files
}

// TestEncodeScriptForms: raw chunks are played as written, in their step,
// and take no call number; an empty turn still counts; allSteps is the
// whole input; an override becomes replay.override.json.
func TestEncodeScriptForms(t *testing.T) {
	got, files := encodedChunks(t, `{"prompts":["p","q"],"turns":[[],[`+
		`{"chunks":[{"type":"tool-call-delta","index":1,"id":"cut","name":"read","argumentsDelta":"{\"a"},{"type":"finish","reason":{"kind":"max-tokens"}}]},`+
		`{"calls":[["read",{"file_path":"a"}]]}]]}`)
	want := []string{
		`{"chunk":{"argumentsDelta":"{\"a","id":"cut","index":1,"name":"read","type":"tool-call-delta"},"step":1,"turn":2}`,
		`{"chunk":{"reason":{"kind":"max-tokens"},"type":"finish"},"step":1,"turn":2}`,
		`{"chunk":{"blockType":"tool-call","index":0,"type":"block-start"},"step":2,"turn":2}`,
	}
	if len(got) != 7 {
		t.Fatalf("%d chunks, want 2 raw and 5 of the call:\n%s", len(got), strings.Join(got, "\n"))
	}
	if diff := cmp.Diff(want, got[:3]); diff != "" {
		t.Errorf("chunks (-want +got):\n%s", diff)
	}
	if !strings.Contains(got[3], `"id":"call_00_probe0001"`) {
		t.Errorf("the call after raw chunks is not the first numbered: %s", got[3])
	}
	log := string(files[recording.SessionFile])
	if !strings.Contains(log, `"chunk":{"type":"tool-call-delta","index":1,"id":"cut"`) {
		t.Errorf("a raw chunk's keys are not in the script's order:\n%s", log)
	}
	if _, ok := files[recording.OverrideFile]; ok {
		t.Error("replay.override.json written for a script without an override")
	}

	_, files = encodedChunks(t, `{"allSteps":[{"op":"initialize"},{"op":"newSessionExpectError","additionalDirectories":["/x"]}],"turns":[],`+
		`"override":[{"kind":"throw","chunks":[],"message":"m","code":"AUTH"}]}`)
	dir := filepath.Join(t.TempDir(), "forms")
	if err := writeTree(dir, files); err != nil {
		t.Fatal(err)
	}
	rec, err := recording.Load(dir)
	if err != nil {
		t.Fatalf("the encoded script does not load as a recording: %v", err)
	}
	if n := len(rec.Input.Steps); n != 2 || rec.Input.Steps[0].Op != "initialize" || rec.Input.Steps[1].Op != "newSessionExpectError" || rec.Input.Steps[1].AdditionalDirectories[0] != "/x" {
		t.Errorf("input.json of allSteps: %s", files[recording.InputFile])
	}
	if len(rec.Events) != 0 {
		t.Errorf("session.jsonl of a script without turns has %d events, want the header alone", len(rec.Events))
	}
	if rec.Override == nil || len(rec.Override.Replace) != 1 || rec.Override.Replace[0].Code != "AUTH" {
		t.Errorf("replay.override.json reads as %+v", rec.Override)
	}
	if got, want := string(files[recording.OverrideFile]), "[\n  {\n    \"kind\": \"throw\",\n    \"chunks\": [],\n    \"message\": \"m\",\n    \"code\": \"AUTH\"\n  }\n]"; got != want {
		t.Errorf("replay.override.json %q, want %q (keys in the script's order, two-space indent)", got, want)
	}
}

// TestNotesAreCurrent: every kept recording's NOTES.md is what its spec and
// settings row say (dsh-oracle regen -notes rewrites them), so a note never
// names a script, a switch or a tool that is not the recording's.
func TestNotesAreCurrent(t *testing.T) {
	specs := genSpecs(t)
	n := 0
	for _, s := range specs {
		dir := filepath.Join(root, "testdata", "replay", "oracle", s.Name)
		got, err := os.ReadFile(filepath.Join(dir, NotesFile))
		if os.IsNotExist(err) {
			continue // not kept: upstream does not reproduce it
		}
		if err != nil {
			t.Fatal(err)
		}
		in, err := ReadInput(dir)
		if err != nil {
			t.Fatal(err)
		}
		if want := s.Notes().Markdown(in); string(got) != string(want) {
			t.Errorf("%s/NOTES.md is stale (go run ./harness/oracle/cmd/dsh-oracle regen -notes %s):\n%s", s.Name, s.Name, cmp.Diff(string(want), string(got)))
		}
		n++
	}
	if n < 50 {
		t.Errorf("compared %d notes, want the fifty-odd kept recordings'", n)
	}
	ents, err := os.ReadDir(filepath.Join(root, "testdata", "replay", "oracle"))
	if err != nil {
		t.Fatal(err)
	}
	named := map[string]bool{}
	for _, s := range specs {
		named[s.Name] = true
	}
	for _, e := range ents {
		if e.IsDir() && !named[e.Name()] {
			t.Errorf("testdata/replay/oracle/%s has no row in gen/settings.tsv: it cannot be made again", e.Name())
		}
	}
}

// TestEncodeChildren: each child is its own session.<n>.jsonl whose header
// names its parent, origin subagent, its depth (its parent's plus one) and
// creation order; its calls are numbered after the session's and the
// earlier children's. Planted bugs caught: a grandchild at depth 1, call
// ids restarting per session.
func TestEncodeChildren(t *testing.T) {
	s, err := ParseScript([]byte(`{"prompts":["p"],"turns":[[{"calls":[["subagent",{}]]},{"text":"done"}]],
		"children":[{"turns":[[{"calls":[["subagent",{}]]},{"text":"one"}]]},{"parent":1,"turns":[[{"calls":[["read",{}]]},{"text":"two"}]]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	files, err := s.Encode()
	if err != nil {
		t.Fatal(err)
	}
	for n, want := range map[int]struct {
		header, call string
	}{
		1: {`{"type":"session","version":0,"id":"00000000-0000-4000-8000-000000000001","createdAt":1,"cwd":"{{cwd}}","parentSession":"00000000-0000-4000-8000-000000000000","origin":"subagent","delegationDepth":1}`, "call_00_probe0002"},
		2: {`{"type":"session","version":0,"id":"00000000-0000-4000-8000-000000000002","createdAt":2,"cwd":"{{cwd}}","parentSession":"00000000-0000-4000-8000-000000000001","origin":"subagent","delegationDepth":2}`, "call_00_probe0003"},
	} {
		log := string(files[recording.ChildFile(n)])
		header, _, _ := strings.Cut(log, "\n")
		if header != want.header {
			t.Errorf("session.%d.jsonl header %s, want %s", n, header, want.header)
		}
		if !strings.Contains(log, want.call) {
			t.Errorf("session.%d.jsonl has no %s:\n%s", n, want.call, log)
		}
	}
	if root := string(files[recording.SessionFile]); !strings.Contains(root, "call_00_probe0001") || strings.Contains(root, "parentSession") {
		t.Errorf("session.jsonl:\n%s", root)
	}
	if s.Calls() != 3 {
		t.Errorf("Calls() = %d, want the session's and the children's 3", s.Calls())
	}
}
