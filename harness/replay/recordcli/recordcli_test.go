package recordcli

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dshsim/dshsim/harness/replay"
	"github.com/dshsim/dshsim/harness/replay/isolate"
	"github.com/dshsim/dshsim/harness/replay/recording"
	"github.com/dshsim/dshsim/internal/waittest"
	"github.com/dshsim/dshsim/sandbox/sandboxtest"
)

func TestMain(m *testing.M) { os.Exit(sandboxtest.Main(m)) }

const key = "sk-recordcli-test-key-0042"

// scenario writes a one-prompt scenario and returns its directory.
func scenario(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "scenario")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	in := `{"steps":[{"op":"initialize"},{"op":"newSession"},{"op":"prompt","text":"Reply DONE."}]}`
	if err := os.WriteFile(filepath.Join(dir, "input.json"), []byte(in), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// server streams "DONE"; hang makes it stop after one delta and wait.
func server(t *testing.T, hang chan struct{}, started chan struct{}) *httptest.Server {
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: {\"choices\":[{\"delta\":{\"content\":\"DONE\"}}]}\n\n")
		w.(http.Flusher).Flush()
		if hang != nil {
			started <- struct{}{}
			<-hang
			return
		}
		fmt.Fprint(w, "data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
	}))
	t.Cleanup(s.Close)
	return s
}

func main(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := Main(args, &out, &errb)
	return code, out.String(), errb.String()
}

// TestUsage: every bad command line is one usage line, exit 2, before
// anything starts (no key is needed to find it), naming each path once.
func TestUsage(t *testing.T) {
	dir := scenario(t)
	exists := t.TempDir()
	out := filepath.Join(t.TempDir(), "x")
	noInput := t.TempDir()
	inputDir := t.TempDir()
	if err := os.Mkdir(filepath.Join(inputDir, "input.json"), 0o755); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(t.TempDir(), "missing")
	twoPrompts := withInput(t, `{"steps":[{"op":"initialize"},{"op":"newSession"},{"op":"prompt","text":"a"},{"op":"prompt","text":"b"}]}`)
	answered := withInput(t, `{"steps":[{"op":"prompt","text":"a"}],"permissionAnswers":[{"kind":"allow_once"}]}`)
	t.Setenv("DEEPSEEK_API_KEY", "")
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no -o", []string{dir}, "-o OUT is required"},
		{"two scenarios", []string{"-o", out, dir, dir}, "want exactly one SCENARIO"},
		{"OUT exists", []string{"-o", exists, dir}, "-o " + exists + " exists: dsh-record writes a new recording"},
		{"OUT's directory missing", []string{"-o", filepath.Join(missing, "rec"), dir}, "-o " + filepath.Join(missing, "rec") + ": its parent " + missing + " is not a directory (dsh-record makes the directory, not its parents)"},
		{"not a scenario", []string{"-o", out, filepath.Join(dir, "input.json")}, "SCENARIO " + filepath.Join(dir, "input.json") + ": not a directory"},
		{"no input.json", []string{"-o", out, noInput}, "SCENARIO " + noInput + ": no input.json (a scenario is a directory holding it)"},
		{"input.json a directory", []string{"-o", out, inputDir}, "SCENARIO " + inputDir + ": input.json: is a directory"},
		{"a bad effort", []string{"-o", out, "-reasoning-effort", "huge", dir}, "-reasoning-effort"},
		{"an unknown front end", []string{"-o", out, "-frontend", "jsonrpc", dir}, `-frontend "jsonrpc": want acp or headless`},
		{"headless with two prompts", []string{"-o", out, "-frontend", "headless", twoPrompts}, "-frontend headless: SCENARIO " + twoPrompts + ": 2 prompt steps, want 1 (a headless run is one task)"},
		{"headless with answers", []string{"-o", out, "-frontend", "headless", answered}, "-frontend headless: SCENARIO " + answered + ": permissionAnswers given, but the headless path has no approval channel"},
		{"a CPU bound too low", []string{"-o", out, "-cpu-time", "10ms", dir}, "a CPU time bound (-cpu-time) of 10ms: want at least 1s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := main(tc.args...)
			if code != 2 || stdout != "" || !strings.HasPrefix(stderr, "dsh-record: "+tc.want) || !strings.HasSuffix(stderr, "; run dsh-record -h for usage\n") || strings.Count(stderr, "\n") != 1 {
				t.Fatalf("exit %d, stderr %q; want 2 and one line starting %q", code, stderr, "dsh-record: "+tc.want)
			}
			if strings.Count(stderr, "input.json") > 1 {
				t.Errorf("stderr %q names input.json more than once", stderr)
			}
		})
	}
	if _, err := os.Stat(missing); err == nil {
		t.Errorf("%s was made", missing)
	}
}

// withInput writes a scenario holding input.json in and returns it.
func withInput(t *testing.T, in string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "input.json"), []byte(in), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestRecordsHeadless: -frontend headless writes the unattended path's
// layout (stream-json.expected.jsonl, no ACP frames), which loads as a
// headless recording and replays MATCH.
func TestRecordsHeadless(t *testing.T) {
	isolate.Require(t)
	s := server(t, nil, nil)
	t.Setenv("DEEPSEEK_API_KEY", key)
	out := filepath.Join(t.TempDir(), "rec")
	code, stdout, stderr := main("-o", out, "-frontend", "headless", "-base-url", s.URL, "-thinking", "", "-reasoning-effort", "", scenario(t))
	if code != 0 || !strings.Contains(stdout, "recorded "+out) {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	if _, err := os.Stat(filepath.Join(out, "stdout.expected.jsonl")); err == nil {
		t.Error("a headless recording holds ACP frames")
	}
	if fe, err := recording.DetectFrontend(out, "rec"); err != nil || fe != recording.Headless {
		t.Fatalf("detected as %q (%v), want headless", fe, err)
	}
	if res := replay.Replay(context.Background(), out, replay.Options{}); res.Verdict != replay.Match {
		t.Fatalf("the recording does not replay: %s\n%s", res.Summary(), res.Detail())
	}
}

// TestMissingKey: one line naming the variable, exit 1, nothing written.
func TestMissingKey(t *testing.T) {
	t.Setenv("DSHSIM_TEST_KEY", "")
	out := filepath.Join(t.TempDir(), "rec")
	code, _, stderr := main("-o", out, "-key-env", "DSHSIM_TEST_KEY", "-base-url", "http://127.0.0.1:1", scenario(t))
	if code != 1 || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "DSHSIM_TEST_KEY") {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	if _, err := os.Stat(out); err == nil {
		t.Fatal("something was written")
	}
}

// TestRecords records against a loopback server given by -base-url.
func TestRecords(t *testing.T) {
	isolate.Require(t)
	s := server(t, nil, nil)
	t.Setenv("DEEPSEEK_API_KEY", key)
	out := filepath.Join(t.TempDir(), "rec")
	code, stdout, stderr := main("-o", out, "-base-url", s.URL, "-thinking", "", "-reasoning-effort", "", scenario(t))
	if code != 0 || !strings.Contains(stdout, "recorded "+out) {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	data, err := os.ReadFile(filepath.Join(out, "session.jsonl"))
	if err != nil || !strings.Contains(string(data), `"text":"DONE"`) || strings.Contains(string(data), key) {
		t.Fatalf("session.jsonl: %v\n%s", err, data)
	}
}

// TestInterrupted sends the process SIGINT while the model streams: exit
// 130, one line saying so, nothing written beside OUT.
func TestInterrupted(t *testing.T) {
	isolate.Require(t)
	hang, started := make(chan struct{}), make(chan struct{}, 1)
	s := server(t, hang, started)
	defer close(hang)
	t.Setenv("DEEPSEEK_API_KEY", key)
	parent := t.TempDir()
	out := filepath.Join(parent, "rec")
	go func() {
		select {
		case <-started:
			syscall.Kill(os.Getpid(), syscall.SIGINT)
		case <-time.After(time.Minute):
		}
	}()
	var code int
	var stderr string
	waittest.Do(t, "dsh-record to stop at SIGINT", func() { code, _, stderr = main("-o", out, "-base-url", s.URL, scenario(t)) })
	if code != 130 || !strings.Contains(stderr, "interrupted") || !strings.Contains(stderr, "nothing written") {
		t.Fatalf("exit %d, stderr %q; want 130 and an interruption", code, stderr)
	}
	if ents, _ := os.ReadDir(parent); len(ents) != 0 {
		t.Fatalf("left behind: %v", ents)
	}
}
