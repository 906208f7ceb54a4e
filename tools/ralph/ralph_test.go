package ralph

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/dshsim/dshsim/internal/jsjson"
	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/pipeline/delegation"
	"github.com/dshsim/dshsim/pipeline/pipelinetest"
	"github.com/dshsim/dshsim/tools/subagent"
	"github.com/dshsim/dshsim/tools/toolreg"
)

// fakeService answers each round with the next report (nil: the child
// fails), recording the prompts.
type fakeService struct {
	subagent.Service
	reports []string
	prompts []string
	schemas []string
}

type fakeRun struct{ res subagent.Result }

func (r fakeRun) ID() string                                      { return "child" }
func (r fakeRun) Done() <-chan struct{}                           { return nil }
func (r fakeRun) Result(context.Context) (subagent.Result, error) { return r.res, nil }
func (r fakeRun) Dispose() error                                  { return nil }

func (f *fakeService) Start(_ context.Context, provider string, req subagent.Request) (subagent.Run, error) {
	if provider != "spawn" {
		return nil, errors.New("provider " + provider)
	}
	f.prompts = append(f.prompts, req.Prompt)
	f.schemas = append(f.schemas, string(req.OutputSchema))
	n := len(f.prompts) - 1
	if n >= len(f.reports) {
		return nil, errors.New("no child left")
	}
	if f.reports[n] == "" {
		return fakeRun{subagent.Result{Stop: delegation.StopCompleted}}, nil
	}
	return fakeRun{subagent.Result{Stop: delegation.StopCompleted, Structured: json.RawMessage(f.reports[n])}}, nil
}

const (
	cont = `{"status":"continue","summary":"ROUND_ONE_HANDOFF","evidence":["Round one inspected the workspace."],"nextSteps":["Finish the snapshot objective."],"blocker":""}`
	done = `{"status":"complete","summary":"The Ralph snapshot objective is complete.","evidence":["Two fresh rounds completed through the shipped app."],"nextSteps":[],"blocker":""}`
)

func call(t *testing.T, svc *fakeService, cfg Config, args string) pipeline.Result {
	t.Helper()
	cfg.Service = svc
	regs, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	reg := pipelinetest.Registry(t, toolreg.Defs(regs...)...)
	return reg.Execute(pipeline.NewCall("call_ralph", Name, json.RawMessage(args), &pipeline.Agent{ID: "root"}, context.Background()))
}

// TestLoop: the rounds as upstream's recording shows them (a continuing
// round, then a complete one), and each way a loop ends.
func TestLoop(t *testing.T) {
	blocked := `{"status":"blocked","summary":"s","evidence":[],"nextSteps":[],"blocker":"no network"}`
	for _, tc := range []struct {
		name, args string
		reports    []string
		cfg        Config
		text       string
		isErr      bool
		rounds     int
	}{
		{"complete after two", `{"objective":" Prove two fresh Ralph rounds. ","maxRounds":2}`, []string{cont, done}, Config{},
			"Ralph worker reported completion after 2 rounds.\nFinal report:\n{\n  \"status\": \"complete\",\n  \"summary\": \"The Ralph snapshot objective is complete.\",\n  \"evidence\": [\n    \"Two fresh rounds completed through the shipped app.\"\n  ],\n  \"nextSteps\": [],\n  \"blocker\": \"\"\n}", false, 2},
		{"blocked after one", `{"objective":"x"}`, []string{blocked}, Config{}, "Ralph worker reported a blocker after 1 round.\nFinal report:\n{\n  \"status\": \"blocked\",", false, 1},
		{"budget-limited at the cap", `{"objective":"x","maxRounds":1}`, []string{cont}, Config{}, "Ralph reached its 1 round limit; the worker reported work remaining.", false, 1},
		{"the model's cap above the deployment's", `{"objective":"x","maxRounds":3}`, nil, Config{MaxRounds: 2}, "Error: Ralph maxRounds 3 exceeds the deployment ceiling 2", true, 0},
		{"the deployment's cap itself", `{"objective":"x","maxRounds":2}`, []string{cont, cont}, Config{MaxRounds: 2}, "Ralph reached its 2 rounds limit", false, 2},
		{"a fractional cap", `{"objective":"x","maxRounds":1.5}`, nil, Config{}, "Error: Ralph maxRounds must be a positive safe integer", true, 0},
		{"a blank objective", `{"objective":"  "}`, nil, Config{}, "Error: Ralph objective must be a non-empty string", true, 0},
		{"a first round without a report", `{"objective":"x"}`, []string{""}, Config{}, "Error: Ralph round 1 child failed before producing a structured report.\nNo previous handoff was available.", true, 1},
		{"a second round without a report", `{"objective":"x"}`, []string{cont, ""}, Config{}, "Error: Ralph round 2 child failed before producing a structured report.\nLast successful handoff:\n{\n  \"status\": \"continue\",", true, 2},
		{"a continuing report without next steps", `{"objective":"x"}`, []string{`{"status":"continue","summary":"s","evidence":[],"nextSteps":[],"blocker":""}`}, Config{}, "Error: Ralph workflow failed: a continuing Ralph report needs nextSteps and an empty blocker", true, 1},
		{"an unnormalized summary", `{"objective":"x"}`, []string{`{"status":"complete","summary":" s","evidence":["e"],"nextSteps":[],"blocker":""}`}, Config{}, "Error: Ralph workflow failed: Ralph round report summary must be non-empty and normalized", true, 1},
		{"a handoff over its bound", `{"objective":"x"}`, []string{cont}, Config{MaxHandoffChars: 100}, "Error: Ralph workflow failed: Ralph round report exceeds maxHandoffChars (161 > 100)", true, 1},
		{"a handoff at its bound", `{"objective":"x","maxRounds":1}`, []string{cont}, Config{MaxHandoffChars: 161}, "Ralph reached its 1 round limit", false, 1},
		{"a child that cannot start", `{"objective":"x"}`, nil, Config{}, "Error: Ralph workflow failed: no child left", true, 1},
		{"a result over its bound", `{"objective":"x","maxRounds":1}`, []string{cont}, Config{MaxResultChars: 40}, "Ralph reached its 1 round \n… [truncated]", false, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			svc := &fakeService{reports: tc.reports}
			r := call(t, svc, tc.cfg, tc.args)
			if !strings.HasPrefix(r.Text(), tc.text) || r.IsError != tc.isErr || len(svc.prompts) != tc.rounds {
				t.Fatalf("result %q (error %v, %d rounds), want %q... (error %v, %d rounds)", r.Text(), r.IsError, len(svc.prompts), tc.text, tc.isErr, tc.rounds)
			}
			for _, s := range svc.schemas {
				if s != ReportSchema {
					t.Fatalf("schema %s", s)
				}
			}
		})
	}
}

// TestPrompts: each round's prompt carries the trimmed objective, its
// round and cap, and the previous report as the child wrote it (the first
// round says there is none).
func TestPrompts(t *testing.T) {
	svc := &fakeService{reports: []string{cont, done}}
	call(t, svc, Config{}, `{"objective":" Prove two fresh Ralph rounds. ","maxRounds":2}`)
	if len(svc.prompts) != 2 {
		t.Fatalf("%d prompts", len(svc.prompts))
	}
	first, second := svc.prompts[0], svc.prompts[1]
	for _, want := range []string{"Immutable objective:\nProve two fresh Ralph rounds.\n\nRalph round: 1 of 2.", "Previous structured handoff:\n(none — this is the first round)\n\n"} {
		if !strings.Contains(first, want) {
			t.Errorf("round 1 lacks %q:\n%s", want, first)
		}
	}
	if !strings.Contains(second, "Ralph round: 2 of 2.") || !strings.Contains(second, "Previous structured handoff:\n"+cont+"\n\n") {
		t.Errorf("round 2:\n%s", second)
	}
	v, _ := jsjson.Parse([]byte(cont))
	if first != Prompt("Prove two fresh Ralph rounds.", 1, 2, nil) || second != Prompt("Prove two fresh Ralph rounds.", 2, 2, v) || !strings.HasPrefix(first, "You are one fresh worker in a foreground Ralph loop.") {
		t.Error("the prompts are not Prompt's")
	}
}

// TestSection: the section and the registration.
func TestSection(t *testing.T) {
	regs, err := New(Config{Service: &fakeService{}})
	if err != nil || len(regs) != 1 || regs[0].Section.Order != 116 || regs[0].Section.Name != "tool:ralph" {
		t.Fatal(regs, err)
	}
	if _, err := New(Config{}); err == nil {
		t.Fatal("no service accepted")
	}
}
