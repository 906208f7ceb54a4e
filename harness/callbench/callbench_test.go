package callbench_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dshsim/dshsim/harness/callbench"
	"github.com/dshsim/dshsim/harness/replay/recording/recordingtest"
)

// TestWriteScriptIsARecording: the script WriteScript writes loads as a
// recording, with one model step per call and the text step after.
func TestWriteScriptIsARecording(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "script")
	calls := []callbench.Call{{Name: "bash", Args: map[string]any{"command": "true", "description": "d"}}, {Name: "run_code", Args: map[string]any{"code": "return 1;"}}}
	if err := callbench.WriteScript(dir, "p", calls); err != nil {
		t.Fatal(err)
	}
	rec := recordingtest.Load(t, dir)
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

// TestLandlockAgent: the agent variant of the tree's overlay (the one
// setup.sh installs) has the sandbox provider's config block, its
// passthrough runner, replaced by the landlock-host plugin, and links the
// oracle's modules; an overlay without a passthrough block under the
// provider is an error naming the file.
func TestLandlockAgent(t *testing.T) {
	tree, err := os.ReadFile("../oracle/agent/cordis.snapshot.yml")
	if err != nil {
		t.Fatal(err)
	}
	oracle := t.TempDir()
	agent := filepath.Join(oracle, "agent")
	os.MkdirAll(agent, 0o755)
	for _, f := range []string{"args.mjs", "bin.mjs", "run.mjs", "probe.test.mjs", "bash-alias.mjs", "package.json"} {
		os.WriteFile(filepath.Join(agent, f), []byte(f), 0o644)
	}
	const provider, host, next = "- id: sandbox\n  name: '@deepseek-ai/dsh-sandbox-local'\n", "- id: landlock-host\n  name: './landlock-host.mjs'\n", "- id: sandbox-policy\n"
	for _, tc := range []struct{ name, overlay, want string }{
		{"the tree's overlay", string(tree), ""},
		{"a block before the next entry", "- id: a\n" + provider + "  config:\n    runnerCommand: ['passthrough-runner']\n" + next, "- id: a\n" + provider + host + next},
		{"the last entry", provider + "  config:\n    runnerCommand: ['passthrough-runner']\n", provider + host},
	} {
		os.WriteFile(filepath.Join(agent, "cordis.snapshot.yml"), []byte(tc.overlay), 0o644)
		dst := filepath.Join(t.TempDir(), "a")
		if err := callbench.LandlockAgent(oracle, dst); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		b, _ := os.ReadFile(filepath.Join(dst, "cordis.snapshot.yml"))
		cfg := string(b)
		if tc.want != "" && cfg != tc.want {
			t.Errorf("%s: overlay %q, want %q", tc.name, cfg, tc.want)
		}
		if !strings.Contains(cfg, provider+host) || strings.Contains(cfg, "passthrough-runner") || strings.Contains(cfg, "runnerCommand") {
			t.Errorf("%s: the provider is not followed by landlock-host, or a runner is left:\n%s", tc.name, cfg)
		}
		if len(cfg) < len(tc.overlay)/2 {
			t.Errorf("%s: the overlay lost more than the provider's block:\n%s", tc.name, cfg)
		}
		if _, err := os.Stat(filepath.Join(dst, "probe.test.mjs")); err != nil {
			t.Errorf("%s: %v (a scenario run under vitest needs it)", tc.name, err)
		}
		if _, err := os.Stat(filepath.Join(dst, "args.mjs")); err != nil {
			t.Errorf("%s: %v (run.mjs imports it)", tc.name, err)
		}
		if l, err := os.Readlink(filepath.Join(dst, "node_modules")); err != nil || l != filepath.Join(oracle, "dsh08", "node_modules") {
			t.Errorf("%s: node_modules -> %q, %v", tc.name, l, err)
		}
	}
	for name, overlay := range map[string]string{
		"no provider":             "- id: sandbox-policy\n",
		"no block":                provider + next + "  config:\n    x: passthrough-runner\n",
		"another provider config": provider + "  config:\n    runnerCommand: ['/usr/bin/runner']\n" + next,
	} {
		os.WriteFile(filepath.Join(agent, "cordis.snapshot.yml"), []byte(overlay), 0o644)
		err := callbench.LandlockAgent(oracle, filepath.Join(t.TempDir(), "b"))
		if err == nil || !strings.Contains(err.Error(), "cordis.snapshot.yml: ") {
			t.Errorf("%s: %v, want an error naming the overlay", name, err)
		}
	}
}
