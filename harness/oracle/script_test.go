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
// testdata/replay/oracle (upstream's refresh keeps both), so the Go encoder
// is the one the recordings were made with.
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
			if diff := cmp.Diff(chunks(t, want), chunks(t, files[recording.SessionFile])); diff != "" {
				t.Errorf("model chunks differ (-recording +encoded):\n%s", diff)
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

// TestScriptCheck: a script without turns, prompts or a usable call is refused
// with the field named.
func TestScriptCheck(t *testing.T) {
	tests := []struct{ spec, want string }{
		{`{"prompts":["p"],"turns":[]}`, "turns: no turn"},
		{`{"turns":[[{"text":"x"}]]}`, "prompts: neither"},
		{`{"prompts":["p"],"turns":[[]]}`, "turns[0]: no step"},
		{`{"prompts":["p"],"turns":[[{"calls":[["bash"]]}]]}`, "a call is [name, arguments]"},
		{`{"prompts":["p"],"turns":[[{"calls":[["",{}]]}]]}`, "non-empty string"},
		{`{"prompts":["p"],"turns":[[{"text":"x"}]],"workspace":{"../x":""}}`, `workspace: "../x"`},
		{`{"prompts":["p"],"turns":[[{"text":"x"}]],"extra":1}`, `unknown field "extra"`},
	}
	for _, tc := range tests {
		_, err := ParseScript([]byte(tc.spec))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseScript(%s) = %v, want an error containing %q", tc.spec, err, tc.want)
		}
	}
}

// TestNotesAreCurrent: every kept recording's NOTES.md is what its spec and
// settings row say (dsh-oracle regen -notes rewrites them), so a note never
// names a script, a switch or a tool that is not the recording's.
func TestNotesAreCurrent(t *testing.T) {
	specs, err := LoadSpecs("gen")
	if err != nil {
		t.Fatal(err)
	}
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
