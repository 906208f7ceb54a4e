package replay_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshsim/dshsim/harness/replay"
	"github.com/dshsim/dshsim/harness/replay/isolate"
	"github.com/dshsim/dshsim/tools/search"
)

// searchScenario is a scenario of six text files whose one prompt the fake
// model answers with a glob for one of them, then DONE.
func searchScenario(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "scenario")
	if err := os.MkdirAll(filepath.Join(dir, "workspace", "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{"input.json": `{"steps":[{"op":"initialize"},{"op":"newSession"},{"op":"prompt","text":"List the text files, then reply DONE."}]}` + "\n"}
	for _, n := range []string{"a.txt", "b.txt", "c.txt", "sub/d.txt", "sub/e.txt", "sub/f.txt"} {
		files["workspace/"+n] = n + "\n"
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func searchSteps(n int, w http.ResponseWriter) {
	if n == 0 {
		sse(w, true, toolCall("call_00_rec0001", "glob", `{"pattern":"**/f.txt"}`)...)
		return
	}
	sse(w, true, `{"choices":[{"delta":{"content":"DONE"},"finish_reason":"stop"}]}`,
		`{"choices":[],"usage":{"prompt_tokens":20,"completion_tokens":1}}`)
}

// TestRecordComposesFileSearch: a live session recorded by dsh-record is
// offered glob and grep, as upstream's base composition offers them, with
// the settings the replay gives a recording that calls them (glob's
// description names them: sampled over a cap of 4), and the recording
// replays MATCH; the rg is DSHSIM_RIPGREP's when set (the session's glob
// runs it), else PATH's, and dsh-record says which ran. Planted bugs
// caught: no search composed (the model is not offered glob), settings
// other than the replay's, DSHSIM_RIPGREP ignored or not shared with the
// contained session (its glob runs PATH's rg or fails).
func TestRecordComposesFileSearch(t *testing.T) {
	isolate.Require(t)
	rgPath, err := exec.LookPath("rg")
	if err != nil {
		t.Skip("no rg on PATH: glob and grep cannot run")
	}
	wrapper := filepath.Join(t.TempDir(), "rg-wrapper")
	// the wrapper's glob drops f.txt, so its result shows it ran
	script := "#!/bin/sh\nif [ \"$1\" = --version ]; then echo 'ripgrep 99.0.0 (wrapper)'; exit 0; fi\nout=$(" + rgPath + " \"$@\")\ns=$?\nprintf '%s\\n' \"$out\" | grep -v 'f[.]txt$'\nexit $s\n"
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ env, note string }{
		{"", "dsh-record: glob and grep ran ripgrep "},
		{wrapper, "dsh-record: glob and grep ran ripgrep 99.0.0 (wrapper) from " + wrapper + " (DSHSIM_RIPGREP)"},
	} {
		t.Setenv(replay.RipgrepEnv, tc.env)
		f := newFakeServer(t, searchSteps)
		var stderr bytes.Buffer
		opt := recordOptions(f)
		opt.Stderr = &stderr
		out, err := record(t, f, searchScenario(t), opt)
		if err != nil {
			t.Fatalf("rg %q: %v", tc.env, err)
		}
		if !strings.Contains(stderr.String(), tc.note) || (tc.env == "") != strings.Contains(stderr.String(), "rg on PATH") {
			t.Errorf("rg %q: dsh-record does not say which rg ran (want %q):\n%s", tc.env, tc.note, stderr.String())
		}
		tools, _ := json.Marshal(f.bodies[0]["tools"])
		desc, _ := json.Marshal(search.GlobDescription(4, true))
		for _, want := range []string{`"name":"glob"`, `"name":"grep"`, `"description":` + string(desc)} {
			if !strings.Contains(string(tools), want) {
				t.Errorf("rg %q: the model is not offered %s: %s", tc.env, want, tools)
			}
		}
		second, _ := json.Marshal(f.bodies[1]["messages"])
		if strings.Contains(string(second), "sub/f.txt") == (tc.env != "") {
			t.Errorf("rg %q: the glob's result is not the rg's: %s", tc.env, second)
		}
		res := replay.Replay(context.Background(), out, replay.Options{})
		if res.Verdict != replay.Match {
			t.Fatalf("rg %q: the recording does not replay: %s\n%s", tc.env, res.Summary(), res.Detail())
		}
	}
}
