package todo

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/pipeline/pipelinetest"
	"github.com/dshsim/dshsim/pipeline/session"
	"github.com/dshsim/dshsim/pipeline/session/sessiontest"
	"github.com/dshsim/dshsim/tools/toolreg"
)

func TestList(t *testing.T) {
	for _, tc := range []struct {
		name     string
		items    []Item
		parallel bool
		want     []Item
		err      string
	}{
		{name: "trimmed", items: []Item{{" read the code \n", InProgress}}, want: []Item{{"read the code", InProgress}}},
		{name: "empty after trim", items: []Item{{"a", Pending}, {" \t\u00a0\ufeff", Pending}}, err: "invalid todo: `content` must be a non-empty string"},
		{name: "duplicate after trim", items: []Item{{"a", Pending}, {" a ", Completed}}, err: `invalid todos: duplicate content "a"`},
		{name: "duplicate quoted as JSON.stringify", items: []Item{{"<x> & \"y\"", Pending}, {"<x> & \"y\"", Pending}}, err: `invalid todos: duplicate content "<x> & \"y\""`},
		{name: "two active refused", items: []Item{{"a", InProgress}, {"b", InProgress}, {"c", Pending}}, err: "invalid todos: at most one task may be in_progress (got 2)"},
		{name: "one active is the bound", items: []Item{{"a", InProgress}, {"b", Completed}}, want: []Item{{"a", InProgress}, {"b", Completed}}},
		{name: "two active allowed in parallel", parallel: true, items: []Item{{"a", InProgress}, {"b", InProgress}}, want: []Item{{"a", InProgress}, {"b", InProgress}}},
		{name: "empty list", items: nil, want: []Item{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := List(tc.items, tc.parallel)
			if tc.err != "" {
				if err == nil || err.Error() != tc.err {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" { // a nil list is not the empty one
				t.Fatalf("List (-want +got):\n%s", diff)
			}
		})
	}
}

// TestCallLogsTheListBetweenCallAndResult runs the tool through a registry:
// the recorded todo-write call, its event and its text.
func TestCallLogsTheListBetweenCallAndResult(t *testing.T) {
	log := sessiontest.New(t, "11111111-2222-4333-8444-555555555555", "/ws")
	agent := &pipeline.Agent{ID: "root", Session: log}
	reg := pipelinetest.Registry(t, defs(Config{AllowParallelInProgress: true})...)
	args := `{"todos": [{"content": "read the code", "status": "in_progress"}, {"content": "watch the background build", "status": "in_progress"}, {"content": "write the fix", "status": "pending"}]}`
	r := reg.Execute(pipeline.NewCall("c1", Name, json.RawMessage(args), agent, context.Background()))
	if r.IsError || r.Text() != "Updated todo list: 1 pending, 2 in progress, 0 completed." {
		t.Fatalf("result %+v", r)
	}
	evs, err := log.Events()
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 1 || evs[0].Type != session.KindTodoWrite {
		t.Fatalf("events %+v", evs)
	}
	want := `{"todos":[{"content":"read the code","status":"in_progress"},{"content":"watch the background build","status":"in_progress"},{"content":"write the fix","status":"pending"}]}`
	if string(evs[0].Data) != want {
		t.Fatalf("event data %s\nwant %s", evs[0].Data, want)
	}
	// A refused list logs nothing; the schema refuses an unknown status or key.
	for _, bad := range []string{
		`{"todos":[{"content":"a","status":"in_progress"},{"content":"b","status":"in_progress"}]}`,
		`{"todos":[{"content":"a","status":"done"}]}`,
		`{"todos":[{"content":"a","status":"pending","note":"x"}]}`,
	} {
		single := pipelinetest.Registry(t, defs(Config{})...)
		if r := single.Execute(pipeline.NewCall("c2", Name, json.RawMessage(bad), agent, context.Background())); !r.IsError {
			t.Fatalf("%s: not refused: %+v", bad, r)
		}
	}
	if evs, _ := log.Events(); len(evs) != 1 {
		t.Fatalf("a refused list was logged: %d events", len(evs))
	}
	// No agent session: refused.
	if r := reg.Execute(pipeline.NewCall("c3", Name, json.RawMessage(`{"todos":[]}`), nil, context.Background())); !r.IsError || !strings.Contains(r.Text(), "requires an owning agent session") {
		t.Fatalf("agentless call: %+v", r)
	}
}

// TestCountsTallyEachStatus pins the tally: each status counted under its
// own name, in the text and in the value's counts (distinct numbers, so a
// status counted under another shows).
func TestCountsTallyEachStatus(t *testing.T) {
	log := sessiontest.New(t, "11111111-2222-4333-8444-555555555555", "/ws")
	agent := &pipeline.Agent{ID: "root", Session: log}
	reg := pipelinetest.Registry(t, defs(Config{})...)
	args := `{"todos": [{"content": "a", "status": "completed"}, {"content": "b", "status": "pending"}, {"content": "c", "status": "completed"}, {"content": "d", "status": "in_progress"}, {"content": "e", "status": "completed"}, {"content": "f", "status": "pending"}]}`
	r := reg.Execute(pipeline.NewCall("c1", Name, json.RawMessage(args), agent, context.Background()))
	if want := "Updated todo list: 2 pending, 1 in progress, 3 completed."; r.IsError || r.Text() != want {
		t.Fatalf("result %q (error %v), want %q", r.Text(), r.IsError, want)
	}
	var value struct {
		Counts json.RawMessage `json:"counts"`
	}
	if err := json.Unmarshal(r.Value, &value); err != nil {
		t.Fatal(err)
	}
	if want := `{"pending":2,"inProgress":1,"completed":3}`; string(value.Counts) != want {
		t.Fatalf("counts %s, want %s", value.Counts, want)
	}
}

func TestDescriptionVariants(t *testing.T) {
	if !strings.Contains(Description(true), "several at once when work genuinely runs in parallel") || strings.Contains(Description(true), "AT MOST ONE") {
		t.Fatal("parallel description")
	}
	if !strings.Contains(Description(false), "Keep AT MOST ONE todo `in_progress` at a time") {
		t.Fatal("single description")
	}
}

// defs are the definitions New registers for cfg.
func defs(cfg Config) []pipeline.Tool {
	regs, _ := New(cfg)
	return toolreg.Defs(regs...)
}
