package sessionquery

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/pipeline/pipelinetest"
	"github.com/dshsim/dshsim/pipeline/session"
	"github.com/dshsim/dshsim/pipeline/session/sessiontest"
	"github.com/dshsim/dshsim/tools/toolreg"
)

// clock returns 2026-01-02T03:04:05.006Z plus one millisecond per event.
func clock() func() time.Time {
	t := time.Date(2026, 1, 2, 3, 4, 5, 6e6, time.UTC)
	return func() time.Time { t = t.Add(time.Millisecond); return t }
}

type msg struct {
	Content []pipeline.Block `json:"content"`
	Source  any              `json:"source"`
	Role    string           `json:"role"`
	ID      string           `json:"id"`
}

// newSession writes a log shaped like the start of upstream's turn: seq 0
// step/start, 1 the prompt, 2 the title, 3 a tool/call of the calling step.
func newSession(t *testing.T) *pipeline.Agent {
	t.Helper()
	l := sessiontest.New(t, "11111111-2222-4333-8444-555555555555", "/ws", session.WithClock(clock()))
	must := func(_ session.Event, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(l.Append("step/start", map[string]int{"turn": 1, "step": 1}))
	must(l.AppendWith("user/message", msg{
		Content: []pipeline.Block{pipeline.TextBlock("Read <event> 1 & say \"ok\" — twice\nthen stop\u0001")},
		Source:  map[string]string{"kind": "user"}, Role: "user", ID: "aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee",
	}, session.AppendOptions{SurfaceOp: "append"}))
	must(l.Append("session/title", map[string]any{"title": "Read event one", "messageSeqs": []int{1}, "source": map[string]string{"kind": "fallback"}}))
	must(l.Append("tool/call", map[string]any{"turn": 1, "step": 1, "callId": "c1", "name": ReadName, "arguments": `{"seq":1}`}))
	return &pipeline.Agent{ID: "root", Session: l}
}

func run(t *testing.T, agent *pipeline.Agent, name, args string) pipeline.Result {
	t.Helper()
	return runCfg(t, Config{MaxSearchResults: 2}, agent, name, args)
}

func runCfg(t *testing.T, cfg Config, agent *pipeline.Agent, name, args string) pipeline.Result {
	t.Helper()
	reg := pipelinetest.Registry(t, defs(cfg)...)
	return reg.Execute(pipeline.NewCall("c1", name, json.RawMessage(args), agent, context.Background()))
}

// TestReadPrintsTheStoredEvent: the target event keeps the stored key order
// and JSON.stringify's escaping (no HTML escapes, non-ASCII raw), under the
// session id and title.
func TestReadPrintsTheStoredEvent(t *testing.T) {
	r := run(t, newSession(t), ReadName, `{"seq":1}`)
	want := "Session 11111111-2222-4333-8444-555555555555 — Read event one\nTarget event seq 1:\n```json\n" + `{
  "type": "user/message",
  "seq": 1,
  "time": 1767323045008,
  "data": {
    "content": [
      {
        "type": "text",
        "text": "Read <event> 1 & say \"ok\" — twice\nthen stop\u0001"
      }
    ],
    "source": {
      "kind": "user"
    },
    "role": "user",
    "id": "aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee"
  },
  "surfaceOp": "append"
}` + "\n```"
	if r.IsError || r.Text() != want {
		t.Errorf("result (error %v):\n%s\nwant:\n%s", r.IsError, r.Text(), want)
	}
	// the value (what a run_code program gets) is the text as a JSON string
	var value string
	if err := json.Unmarshal(r.Value, &value); err != nil || value != want {
		t.Errorf("value %s (%v), want the text as a string", r.Value, err)
	}
}

func TestReadNeighbours(t *testing.T) {
	r := run(t, newSession(t), ReadName, `{"seq":2,"before":5,"after":1}`)
	text := r.Text()
	for _, want := range []string{
		"```\n\nBefore:\n- seq 0 | step/start | 2026-01-02T03:04:05.007Z | (no semantic text)\n- seq 1 | user/message | 2026-01-02T03:04:05.008Z\n  Read <event> 1 & say \"ok\" — twice\n  then stop\u0001",
		"\n\nAfter:\n- seq 3 | tool/call | 2026-01-02T03:04:05.010Z\n  session_event_read\n  {\"seq\":1}", // name and arguments on their own lines
	} {
		if !strings.Contains(text, want) {
			t.Errorf("result lacks %q:\n%s", want, text)
		}
	}
	if r := run(t, newSession(t), ReadName, `{"seq":0}`); strings.Contains(r.Text(), "Before:") || strings.Contains(r.Text(), "After:") {
		t.Errorf("no window asked, but neighbours shown:\n%s", r.Text())
	}
}

func TestReadErrors(t *testing.T) {
	tests := []struct{ name, args, text, code string }{
		// the schema check comes first (ToolArgsError): seq is a required integer
		{"no seq", `{}`, `Error: invalid arguments: missing required property "seq"`, "INVALID_ARGS"},
		{"a negative seq", `{"seq":-1}`, "Error: seq must be a non-negative safe integer", CodeInvalidFilter},
		{"a fraction", `{"seq":1.5}`, `Error: invalid arguments: "seq" must be an integer`, "INVALID_ARGS"},
		{"a string", `{"seq":"1"}`, `Error: invalid arguments: "seq" must be an integer`, "INVALID_ARGS"},
		{"beyond 2^53-1", `{"seq":9007199254740992}`, "Error: seq must be a non-negative safe integer", CodeInvalidFilter},
		{"a bad before after a good seq", `{"seq":1,"before":-2}`, "Error: before must be a non-negative safe integer", CodeInvalidFilter},
		{"a bad after", `{"seq":1,"after":true}`, `Error: invalid arguments: "after" must be an integer`, "INVALID_ARGS"},
		{"a negative after", `{"seq":1,"after":-1}`, "Error: after must be a non-negative safe integer", CodeInvalidFilter},
		{"a window of 51", `{"seq":1,"after":51}`, "Error: session event window is invalid", CodeInvalidWindow},
		{"a window of 50 is fine", `{"seq":1,"after":50}`, "", ""},
		{"an unknown seq", `{"seq":4}`, "Error: session event was not found", CodeNotFound},
		{"another session", `{"seq":1,"session_id":"99999999-2222-4333-8444-555555555555"}`, "Error: session target is outside the caller workspace", CodeUnauthorized},
		{"the own session by id", `{"seq":1,"session_id":"11111111-2222-4333-8444-555555555555"}`, "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := run(t, newSession(t), ReadName, tc.args)
			if tc.text == "" {
				if r.IsError {
					t.Fatalf("error %s", r.Text())
				}
				return
			}
			if !r.IsError || r.Text() != tc.text || r.Error.Info == nil || r.Error.Info.Code != tc.code {
				t.Errorf("result %q (info %+v), want %q with code %s", r.Text(), r.Error, tc.text, tc.code)
			}
		})
	}
	r := run(t, &pipeline.Agent{ID: "root"}, ReadName, `{"seq":1}`)
	if r.Text() != "Error: session query tools require an agent-bound caller" || r.Error.Info.Code != CodeMissingAgent {
		t.Errorf("no session: %q", r.Text())
	}
}

func TestUntitled(t *testing.T) {
	l := sessiontest.New(t, "s", "")
	if _, err := l.Append("step/start", map[string]int{"turn": 1}); err != nil {
		t.Fatal(err)
	}
	r := run(t, &pipeline.Agent{Session: l}, ReadName, `{"seq":0}`)
	if !strings.HasPrefix(r.Text(), "Session s — untitled\n") {
		t.Errorf("%q", r.Text())
	}
}

func TestSearch(t *testing.T) {
	agent := newSession(t)
	for _, e := range []struct {
		typ  string
		data any
	}{
		{"step/start", map[string]int{"turn": 1, "step": 2}},
		{"tool/call", map[string]any{"callId": "c2", "name": SearchName, "arguments": `{"query":"only-in-the-calling-step"}`}},
	} {
		if _, err := agent.Session.Append(e.typ, e.data); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct{ name, args, want string }{
		{"a phrase hit, case folded, the calling step excluded", `{"query":"  read   <EVENT> "}`,
			"Session 11111111-2222-4333-8444-555555555555 — Read event one\n\nEvent search results (1):\n1. seq 1 | user/message | current | 2026-01-02T03:04:05.008Z\n   Snippet: Read <event> 1 & say \"ok\" — twice then stop\u0001"},
		{"the calling step's own events are not searched", `{"query":"only-in-the-calling-step"}`, "\n\nNo prior event matches found."},
		{"nothing before the step", `{"query":"nothing like this"}`, "Session 11111111-2222-4333-8444-555555555555 — Read event one\n\nNo prior event matches found."},
		{"a title is not searched", `{"query":"read","event_types":["session/title"]}`, "\n\nNo prior event matches found."},
		{"a surface filter", `{"query":"read","surfaces":["log-only"]}`, "Event search results (1):\n1. seq 3 | tool/call | log-only | 2026-01-02T03:04:05.010Z\n   Snippet: session_event_read {\"seq\":1}"},
		{"a seq window", `{"query":"1","seq_from":3,"seq_to":3}`, "Event search results (1):\n1. seq 3 | tool/call | log-only |"},
		{"a time window", `{"query":"1","time_from":"2026-01-02T03:04:05.009Z","time_to":"2026-01-02T05:04:05.010+02:00"}`, "Event search results (1):\n1. seq 3 | tool/call | log-only | 2026-01-02T03:04:05.010Z"},
		{"words, not substrings", `{"query":"ea"}`, "\n\nNo prior event matches found."},
		{"a query without words", `{"query":"<>"}`, "\n\nNo prior event matches found."},
		{"a blank query", `{"query":" \n "}`, "Error: session-search query must contain non-whitespace text"},
		{"a NUL", `{"query":"a\u0000b"}`, "Error: session-search query must not contain NUL"},
		{"a time without a zone", `{"query":"a","time_from":"2026-01-02T03:04:05"}`, "Error: session time_from range must be an ISO 8601 timestamp with Z or a numeric offset"},
		{"a date that does not exist", `{"query":"a","time_to":"2026-02-29T00:00Z"}`, "Error: session time_to range must be a valid ISO 8601 timestamp"},
		{"a time range backwards", `{"query":"a","time_from":"2026-01-02T03:04:05.0101Z","time_to":"2026-01-02T03:04:05.010Z"}`, "Error: session time range from must be less than or equal to to"},
		{"a lower bound past the millisecond admits the next one", `{"query":"1","time_from":"2026-01-02T03:04:05.0091Z","time_to":"2026-01-02T03:04:05.0109+00:00"}`, "Event search results (1):\n1. seq 3 | tool/call"},
		{"a lower bound past the millisecond excludes its own", `{"query":"1","time_from":"2026-01-02T03:04:05.0101Z"}`, "\n\nNo prior event matches found."},
		{"the target is checked before the query", `{"query":" ","session_id":""}`, "Error: session target is outside the caller workspace"},
		{"the sequence bounds are named so", `{"query":"a","seq_from":-1}`, "Error: sequence lower bound must be a non-negative safe integer"},
		{"the upper bound too", `{"query":"a","seq_to":9007199254740992}`, "Error: sequence upper bound must be a non-negative safe integer"},
		{"a sequence range backwards", `{"query":"a","seq_from":5,"seq_to":4}`, "Error: session sequence range from must be less than or equal to to"},
		{"a range past the calling step finds nothing before the other filters are read", `{"query":"a","seq_from":100,"time_from":"yesterday","event_types":[]}`, "Read event one\n\nNo prior event matches found."},
		{"an empty type list", `{"query":"a","event_types":[]}`, "Error: event_types must contain at least one value when supplied"},
		{"an empty surface list", `{"query":"a","surfaces":[]}`, "Error: surfaces must contain at least one value when supplied"},
		{"JavaScript's whitespace: U+FEFF is space", "{\"query\":\"\ufeff\"}", "Error: session-search query must contain non-whitespace text"},
		{"an unknown surface (the schema's enum)", `{"query":"a","surfaces":["hidden"]}`, `Error: invalid arguments: "surfaces[0]" must be one of ["current","shadowed","log-only"]`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := run(t, agent, SearchName, tc.args).Text(); !strings.Contains(got, tc.want) {
				t.Errorf("result:\n%s\nwant it to contain:\n%s", got, tc.want)
			}
		})
	}
}

// TestSchemasAreUpstreams: the parameters are valid JSON and keep upstream's
// key order (the replay compares them with the recording byte for byte).
func TestSchemasAreUpstreams(t *testing.T) {
	for _, tool := range defs(Config{}) {
		if !json.Valid(tool.Parameters) {
			t.Errorf("%s parameters are not JSON", tool.Name)
		}
	}
	if !strings.HasPrefix(ReadParameters, `{"type":"object","properties":{"session_id":`) {
		t.Error("read parameters lost upstream's key order")
	}
}

// defs are the definitions New registers for cfg.
func defs(cfg Config) []pipeline.Tool {
	regs, _ := New(cfg)
	return toolreg.Defs(regs...)
}
