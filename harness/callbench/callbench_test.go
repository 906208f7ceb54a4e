package callbench_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dshsim/dshsim/harness/callbench"
	"github.com/dshsim/dshsim/harness/replay/recording"
)

// TestWriteScriptIsARecording: the script WriteScript writes loads as a
// recording, with one model step per call and the text step after.
func TestWriteScriptIsARecording(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "script")
	calls := []callbench.Call{{Name: "bash", Args: map[string]any{"command": "true", "description": "d"}}, {Name: "run_code", Args: map[string]any{"code": "return 1;"}}}
	if err := callbench.WriteScript(dir, "p", calls); err != nil {
		t.Fatal(err)
	}
	rec, err := recording.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	chunks := 0
	for _, e := range rec.Events {
		if e.Type == "assistant/chunk" {
			chunks++
		}
	}
	if chunks != 5*3 {
		t.Errorf("%d assistant chunks, want 15 (five per step, three steps)", chunks)
	}
}

func TestCallTimes(t *testing.T) {
	log := []byte(`{"type":"session","id":"x"}
{"type":"tool/call","seq":1,"time":1000,"data":{"callId":"a","name":"bash","arguments":"{}"}}
{"type":"tool/call","seq":2,"time":1001,"data":{"callId":"r","name":"read","arguments":"{}"}}
{"type":"tool/result","seq":3,"time":1007,"data":{"message":{"source":{"kind":"tool","callId":"a"},"content":[{"type":"tool-result","content":[{"type":"text","text":"ok"}]}]}}}
{"type":"tool/result","seq":4,"time":1009,"data":{"message":{"source":{"kind":"tool","callId":"r"},"content":[]}}}
{"type":"tool/call","seq":5,"time":2000,"data":{"callId":"b","name":"bash","arguments":"{}"}}
{"type":"tool/result","seq":6,"time":2012,"data":{"message":{"source":{"kind":"tool","callId":"b"},"content":[]}}}
`)
	ts, err := callbench.CallTimes(log, "bash")
	if err != nil {
		t.Fatal(err)
	}
	if len(ts) != 2 || ts[0].CallID != "a" || ts[0].Took != 7*time.Millisecond || ts[0].Text != "ok" || ts[1].Took != 12*time.Millisecond {
		t.Errorf("%+v", ts)
	}
	cut := []byte(strings.Join(strings.Split(string(log), "\n")[:6], "\n"))
	if _, err := callbench.CallTimes(cut, "bash"); err == nil || !strings.Contains(err.Error(), "bash call b has no tool/result") {
		t.Errorf("a call without a result: %v", err)
	}
	if _, err := callbench.CallTimes([]byte("{\nnot json"), "bash"); err == nil || !strings.Contains(err.Error(), "line 1") {
		t.Errorf("a bad line: %v", err)
	}
}

// TestLandlockAgent: the agent variant replaces the passthrough runner with
// the landlock-host plugin and links the oracle's modules; an oracle whose
// overlay lacks the passthrough block is an error naming the file.
func TestLandlockAgent(t *testing.T) {
	oracle := t.TempDir()
	agent := filepath.Join(oracle, "agent")
	os.MkdirAll(agent, 0o755)
	for _, f := range []string{"bin.mjs", "run.mjs", "bash-alias.mjs", "package.json"} {
		os.WriteFile(filepath.Join(agent, f), []byte(f), 0o644)
	}
	overlay := "- id: sandbox\n  name: '@deepseek-ai/dsh-sandbox-local'\n  config:\n    runnerCommand: ['bash', '-c', 'while [ \"$1\" != \"--\" ]; do shift; done; shift; exec \"$@\"', 'passthrough-runner']\n    runnerFailureSignatures: ['passthrough-runner: profile rejected']\n- id: sandbox-policy\n"
	os.WriteFile(filepath.Join(agent, "cordis.snapshot.yml"), []byte(overlay), 0o644)
	dst := filepath.Join(t.TempDir(), "a")
	if err := callbench.LandlockAgent(oracle, dst); err != nil {
		t.Fatal(err)
	}
	cfg, _ := os.ReadFile(filepath.Join(dst, "cordis.snapshot.yml"))
	if want := "- id: sandbox\n  name: '@deepseek-ai/dsh-sandbox-local'\n- id: landlock-host\n  name: './landlock-host.mjs'\n- id: sandbox-policy\n"; string(cfg) != want {
		t.Errorf("overlay %q, want %q", cfg, want)
	}
	if l, err := os.Readlink(filepath.Join(dst, "node_modules")); err != nil || l != filepath.Join(oracle, "dsh08", "node_modules") {
		t.Errorf("node_modules -> %q, %v", l, err)
	}
	os.WriteFile(filepath.Join(agent, "cordis.snapshot.yml"), []byte("- id: sandbox\n"), 0o644)
	if err := callbench.LandlockAgent(oracle, filepath.Join(t.TempDir(), "b")); err == nil || !strings.Contains(err.Error(), "cordis.snapshot.yml: the sandbox provider's passthrough configuration is not there") {
		t.Errorf("an overlay without the passthrough block: %v", err)
	}
}
