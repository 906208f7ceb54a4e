package subagent_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/dshsim/dshsim/harness/replay/toolschema"
	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/pipeline/delegation"
	"github.com/dshsim/dshsim/pipeline/pipelinetest"
	"github.com/dshsim/dshsim/pipeline/session/sessiontest"
	"github.com/dshsim/dshsim/tools/jobs"
	"github.com/dshsim/dshsim/tools/subagent"
	"github.com/dshsim/dshsim/tools/toolreg"
)

// fake is a constructed delegation service: it records what the tools ask
// and answers from its fields.
type fake struct {
	mu       sync.Mutex
	calls    []string
	info     subagent.ProviderInfo
	result   subagent.Result
	runErr   error
	startErr error
	dispErr  error
	entries  []subagent.Entry
	hold     chan struct{} // when set, a run's result waits for it
}

func (f *fake) note(s string) {
	f.mu.Lock()
	f.calls = append(f.calls, s)
	f.mu.Unlock()
}

func (f *fake) Provider(name string) (subagent.ProviderInfo, bool) { return f.info, name != "missing" }

type fakeRun struct {
	f    *fake
	done chan struct{}
}

func (r *fakeRun) ID() string            { return "child-1" }
func (r *fakeRun) Done() <-chan struct{} { return r.done }
func (r *fakeRun) Result(ctx context.Context) (subagent.Result, error) {
	select {
	case <-r.done:
	case <-ctx.Done():
		return subagent.Result{}, ctx.Err()
	}
	return r.f.result, r.f.runErr
}
func (r *fakeRun) Dispose() error { r.f.note("dispose"); return r.f.dispErr }

func (f *fake) Start(ctx context.Context, provider string, req subagent.Request) (subagent.Run, error) {
	f.note("start " + provider + " " + req.Label + ": " + req.Prompt)
	if f.startErr != nil {
		return nil, f.startErr
	}
	done := make(chan struct{})
	if f.hold == nil {
		close(done)
	} else {
		go func() { <-f.hold; close(done) }()
	}
	return &fakeRun{f: f, done: done}, nil
}

func (f *fake) StartContinuable(ctx context.Context, provider string, req subagent.Request) (string, error) {
	f.note("continuable " + provider + " " + req.Label)
	return "33333333-3333-4333-8333-333333333333", nil
}

func (f *fake) Followup(ctx context.Context, caller *pipeline.Agent, id, msg string) (string, error) {
	f.note("followup " + id + " " + msg)
	if id == "unknown" {
		return "", pipeline.NewError("SubagentError", "NOT_RESUMABLE", `subagent "unknown" is unavailable`)
	}
	return "m1", nil
}

func (f *fake) Interrupt(caller *pipeline.Agent, id string) error {
	f.note("interrupt " + id)
	return nil
}

func (f *fake) List(ctx context.Context, caller *pipeline.Agent, descendants bool) ([]subagent.Entry, error) {
	return f.entries, nil
}

func (f *fake) Report(ctx context.Context, caller *pipeline.Agent, output string) (string, error) {
	f.note("report " + output)
	return "m2", nil
}

func newTool(t *testing.T, f *fake, inst subagent.Instance) (pipeline.Tool, *jobs.Registry) {
	t.Helper()
	reg := jobs.NewRegistry(jobs.Options{})
	regs, err := subagent.New(subagent.Config{Instances: []subagent.Instance{inst}, Service: f, Jobs: reg})
	if err != nil {
		t.Fatal(err)
	}
	return regs[0].Def, reg
}

func call(t *testing.T, tool pipeline.Tool, args string) pipeline.Result {
	t.Helper()
	r := pipelinetest.Registry(t, tool)
	agent := &pipeline.Agent{ID: "parent", Session: sessiontest.New(t, "parent", "")}
	return r.Execute(pipeline.NewCall("c1", tool.Name, json.RawMessage(args), agent, context.Background()))
}

func one(i int) *int { return &i }

// TestRouting is upstream's routing table: continuable instances start
// continuable children unless run_in_background is false; one-shot ones run
// in the foreground unless it is true (a job); an instance without
// background refuses true.
func TestRouting(t *testing.T) {
	cont := subagent.Instance{Name: "subagent", Provider: "spawn", Background: subagent.Continuable, MaxDepth: one(1)}
	oneShot := subagent.Instance{Name: "subagent_codex", Provider: "diag"}
	fork := subagent.Instance{Name: "subagent_fork", Provider: "fork", NoBackground: true, MaxDepth: one(1)}
	for _, tc := range []struct {
		name string
		inst subagent.Instance
		args string
		text string
		call string
	}{
		{"continuable default", cont, `{"description":"d","prompt":"p"}`, "started subagent 33333333-3333-4333-8333-333333333333", "continuable spawn d"},
		{"continuable true", cont, `{"description":"d","prompt":"p","run_in_background":true}`, "started subagent 33333333-3333-4333-8333-333333333333", "continuable spawn d"},
		{"continuable false", cont, `{"description":"d","prompt":"p","run_in_background":false}`, "CHILD_OK", "start spawn d: p"},
		{"one-shot default", oneShot, `{"description":"d","prompt":"p"}`, "CHILD_OK", "start diag d: p"},
		{"one-shot true", oneShot, `{"description":"d","prompt":"p","run_in_background":true}`, "started background subagent job subagent-1", "start diag d: p"},
		{"no background", fork, `{"description":"d","prompt":"p"}`, "CHILD_OK", "start fork d: p"},
		{"no background, true", fork, `{"description":"d","prompt":"p","run_in_background":true}`, "Error: run_in_background is disabled for this tool instance (enableRunInBackground: false)", ""},
		// without the parameter the schema checks no type: only true refuses
		{"no background, the string true", fork, `{"description":"d","prompt":"p","run_in_background":"true"}`, "CHILD_OK", "start fork d: p"},
		{"no background, 1", fork, `{"description":"d","prompt":"p","run_in_background":1}`, "CHILD_OK", "start fork d: p"},
		{"no background, null", fork, `{"description":"d","prompt":"p","run_in_background":null}`, "CHILD_OK", "start fork d: p"},
		{"no background, false", fork, `{"description":"d","prompt":"p","run_in_background":false}`, "CHILD_OK", "start fork d: p"},
		{"continuable, the string false", cont, `{"description":"d","prompt":"p","run_in_background":"false"}`, "Error: invalid arguments: \"run_in_background\" must be a boolean", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &fake{info: subagent.ProviderInfo{DepthLimit: true, Continuable: true}, result: subagent.Result{Stop: delegation.StopCompleted, Output: []json.RawMessage{json.RawMessage(`{"type":"reasoning","text":"r"}`), json.RawMessage(`{"type":"text","text":"CHILD_OK"}`)}}}
			tool, _ := newTool(t, f, tc.inst)
			if !tool.ConcurrencySafe {
				t.Error("a delegation tool is concurrency-safe")
			}
			res := call(t, tool, tc.args)
			if res.Text() != tc.text {
				t.Errorf("text %q, want %q", res.Text(), tc.text)
			}
			if first := strings.Join(f.calls, "|"); tc.call != "" && !strings.HasPrefix(first, tc.call) || tc.call == "" && first != "" {
				t.Errorf("service calls %q, want %q first", first, tc.call)
			}
		})
	}
}

// TestForegroundFailures: the abnormal-end texts and the published-run
// failure's aggregate, each a plain error (no error field).
func TestForegroundFailures(t *testing.T) {
	partial := []json.RawMessage{json.RawMessage(`{"type":"text","text":"partial assistant text"}`)}
	for _, tc := range []struct {
		name string
		f    *fake
		want string
	}{
		{"diagnostic", &fake{result: subagent.Result{Stop: delegation.StopError, Diagnostic: "Product subagent failure (product: Codex)", Output: partial}},
			"Error: subagent run failed\nDiagnostic: Product subagent failure (product: Codex)\nPartial output before the run ended:\npartial assistant text"},
		{"max tokens", &fake{result: subagent.Result{Stop: delegation.StopMaxTokens, Output: partial}},
			"Error: subagent run hit its token limit before finishing\nPartial output before the run ended:\npartial assistant text"},
		{"run and disposal fail", &fake{runErr: errors.New("snapshot published run failed"), dispErr: errors.New("snapshot published handle disposal failed")},
			"Error: subagent run failed: Error: snapshot published run failed; dispose failed: Error: snapshot published handle disposal failed"},
		{"run fails", &fake{runErr: errors.New("snapshot published run failed")}, "Error: snapshot published run failed"},
		{"disposal fails", &fake{result: subagent.Result{Stop: delegation.StopCompleted}, dispErr: errors.New("gone")}, "Error: gone"},
		{"start fails", &fake{startErr: errors.New("subagent depth 2 exceeds maxDepth 1")}, "Error: subagent depth 2 exceeds maxDepth 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.f.info = subagent.ProviderInfo{DepthLimit: true}
			tool, _ := newTool(t, tc.f, subagent.Instance{Name: "subagent", Provider: "spawn", NoBackground: true})
			res := call(t, tool, `{"description":"d","prompt":"p"}`)
			if res.Text() != tc.want || !res.IsError || res.Error.Info != nil {
				t.Errorf("%q (isError %v, info %+v), want %q", res.Text(), res.IsError, res.Error, tc.want)
			}
			if tc.f.startErr == nil && !strings.Contains(strings.Join(tc.f.calls, "|"), "dispose") {
				t.Error("the run was not disposed")
			}
		})
	}
}

// TestBackgroundJobs: a one-shot background child's job and its outcome.
func TestBackgroundJobs(t *testing.T) {
	f := &fake{result: subagent.Result{Stop: delegation.StopError, Diagnostic: "boom", Output: []json.RawMessage{json.RawMessage(`{"type":"text","text":"partial"}`)}}}
	tool, reg := newTool(t, f, subagent.Instance{Name: "subagent_codex", Provider: "diag"})
	if res := call(t, tool, `{"description":"Observe","prompt":"p","run_in_background":true}`); res.Text() != "started background subagent job subagent-1" {
		t.Fatalf("start: %q", res.Text())
	}
	j, err := reg.Get("parent", "subagent-1")
	if err != nil {
		t.Fatal(err)
	}
	if rd := j.Read(); rd.Text() != "(no new output)\n[status: failed, error; diagnostic: boom]" {
		t.Errorf("job read: %q", rd.Text())
	}
	f.hold = make(chan struct{})
	f.result = subagent.Result{Stop: delegation.StopCompleted, Output: []json.RawMessage{json.RawMessage(`{"type":"text","text":"DONE"}`)}}
	call(t, tool, `{"description":"later","prompt":"p","run_in_background":true}`)
	j2, _ := reg.Get("parent", "subagent-2")
	if s, _ := j2.StatusDetail(); s != jobs.StatusRunning {
		t.Errorf("a held run's job is %s", s)
	}
	close(f.hold)
	j2.WaitFor(context.Background(), 1e10)
	if rd := j2.Read(); rd.Text() != "DONE\n[status: completed]" {
		t.Errorf("completed job read: %q", rd.Text())
	}
}

func TestControlTools(t *testing.T) {
	f := &fake{entries: []subagent.Entry{
		{ID: "A", Continuable: true, Label: "Reply with CHILD_OK", Status: "ready", Parent: "P", Depth: 1},
		{ID: "B", Label: "one-shot", Status: "idle", Parent: "P", Depth: 1},
		{ID: "C", Diagnostic: "corrupt", Parent: "A", Depth: 2},
	}}
	regs, _ := subagent.New(subagent.Config{Control: true, Service: f})
	tools := toolreg.Defs(regs...)
	if res := call(t, tools[0], `{"subagent_id":"A","message":"Now reply"}`); res.Text() != "message queued as the next turn for subagent A" {
		t.Errorf("send_message: %q", res.Text())
	}
	res := call(t, tools[0], `{"subagent_id":"unknown","message":"x"}`)
	if res.Text() != `Error: subagent "unknown" is unavailable` || res.Error.Info == nil || res.Error.Info.Code != "NOT_RESUMABLE" || res.Error.Info.Name != "SubagentError" {
		t.Errorf("unknown id: %q %+v", res.Text(), res.Error)
	}
	if res := call(t, tools[1], `{"agent_id":"A"}`); res.Text() != "interrupt requested for agent A" {
		t.Errorf("interrupt_agent: %q", res.Text())
	}
	if res := call(t, tools[2], `{}`); res.Text() != "A [ready] — Reply with CHILD_OK\nC [diagnostic: corrupt]" {
		t.Errorf("list_agents children: %q", res.Text())
	}
	if res := call(t, tools[2], `{"scope":"descendants"}`); res.Text() != "A [ready] parent=P depth=1 — Reply with CHILD_OK\nC [diagnostic: corrupt] parent=A depth=2" {
		t.Errorf("list_agents descendants: %q", res.Text())
	}
	if res := call(t, tools[2], `{"scope":"everything"}`); !res.IsError {
		t.Errorf("a scope outside the enum: %q", res.Text())
	}
	f.entries = f.entries[1:2]
	if res := call(t, tools[2], `{}`); res.Text() != "(no subagents)" {
		t.Errorf("only one-shot children: %q", res.Text())
	}
	regs, _ = subagent.Report(subagent.Config{Service: f})
	report, section := regs[0].Def, regs[0].Section
	if res := call(t, report, `{"output":"CHILD_REPORT_OK"}`); res.Text() != "report accepted by the agent that started you as message m2" {
		t.Errorf("report: %q", res.Text())
	}
	if section.Name != "tool:report" || section.Order != 117 {
		t.Errorf("report section %+v", section)
	}
}

func TestLoadRefusals(t *testing.T) {
	f := &fake{info: subagent.ProviderInfo{}}
	for _, tc := range []struct {
		inst subagent.Instance
		want string
	}{
		{subagent.Instance{Provider: "spawn", MaxDepth: one(-1)}, "subagent maxDepth must be a non-negative safe integer"},
		{subagent.Instance{Provider: "spawn", ToolFilter: &pipeline.Filter{}}, "tool-subagent: `toolFilter` is configured but names neither `allow` nor `deny` — remove the key or fill the filter"},
		{subagent.Instance{Provider: "spawn", MaxDepth: one(1)}, `tool-subagent: provider "spawn" cannot enforce maxDepth (no depthLimit capability) — set maxDepth: 'provider-managed' to leave the recursion budget to the provider`},
		{subagent.Instance{Provider: "spawn", Background: subagent.Continuable}, "tool-subagent: provider \"spawn\" does not support `backgroundMode: continuable`"},
		{subagent.Instance{Provider: "missing"}, `tool-subagent: no subagent provider registered for "missing"`},
	} {
		if _, err := subagent.New(subagent.Config{Instances: []subagent.Instance{tc.inst}, Service: f, Jobs: jobs.NewRegistry(jobs.Options{})}); err == nil || err.Error() != tc.want {
			t.Errorf("%+v: %v, want %q", tc.inst, err, tc.want)
		}
	}
	tool, _ := newTool(t, &fake{info: subagent.ProviderInfo{DepthLimit: true}}, subagent.Instance{Provider: "spawn", NoBackground: true})
	r := pipelinetest.Registry(t, tool)
	if res := r.Execute(pipeline.NewCall("c", tool.Name, json.RawMessage(`{"description":"d","prompt":"p"}`), nil, context.Background())); res.Text() != "Error: subagent tool requires a calling agent (exec.agent was undefined)" {
		t.Errorf("agentless: %q", res.Text())
	}
}

// TestSchemasAsRecorded: every schema, description and prompt section
// equals what upstream's recorded sidecars pin (text-turn's default
// composition, the continuable child's report, the diagnostic scenario's
// one-shot instance with background jobs).
func TestSchemasAsRecorded(t *testing.T) {
	f := &fake{info: subagent.ProviderInfo{DepthLimit: true, Continuable: true}}
	forkF := &fake{info: subagent.ProviderInfo{DepthLimit: true, InheritsContext: true}}
	var ours []toolschema.Schema
	add := func(ts ...pipeline.Tool) {
		for _, t := range ts {
			ours = append(ours, toolschema.Schema{Name: t.Name, Description: t.Description, Parameters: t.Parameters})
		}
	}
	sub, _ := subagent.New(subagent.Config{Instances: []subagent.Instance{{Name: "subagent", Provider: "spawn", Background: subagent.Continuable, MaxDepth: one(1)}}, Service: f, Jobs: jobs.NewRegistry(jobs.Options{})})
	fork, _ := subagent.New(subagent.Config{Instances: []subagent.Instance{{Name: "subagent_fork", Provider: "fork", NoBackground: true, MaxDepth: one(1)}}, Service: forkF})
	control, _ := subagent.New(subagent.Config{Control: true, Service: f})
	add(toolreg.Defs(slices.Concat(sub, fork, control)...)...)
	compare(t, "text-turn", "tool-schemas.expected.json", ours, 5)

	report, _ := subagent.Report(subagent.Config{Service: f})
	compare(t, "subagent-report", "tool-schemas.1.expected.json", []toolschema.Schema{{Name: report[0].Def.Name, Description: report[0].Def.Description, Parameters: report[0].Def.Parameters}}, 1)
	codex, _ := subagent.New(subagent.Config{Instances: []subagent.Instance{{Name: "subagent_codex", Provider: "diag"}}, Service: &fake{}, Jobs: jobs.NewRegistry(jobs.Options{})})
	d := codex[0].Def
	compare(t, "product-subagent-result-diagnostic", "tool-schemas.expected.json", []toolschema.Schema{{Name: d.Name, Description: d.Description, Parameters: d.Parameters}}, 1)
	if s := sub[0].Section; s == nil || s.Name != "tool:subagent" || s.Order != 116.5 {
		t.Errorf("continuable section %+v", s)
	}
	prompt, err := os.ReadFile(filepath.Join("..", "..", "transcripts", "text-turn", "system-prompt.expected.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(prompt), "\n\n"+sub[0].Section.Text+"\n") {
		t.Error("the tool:subagent section is not in text-turn's recorded system prompt")
	}
	if fork[0].Section != nil {
		t.Error("an instance without background has a section")
	}
}

// compare checks ours against the named sidecar (found under transcripts/
// or, for recordings not copied yet, upstream's shelf).
func compare(t *testing.T, rec, file string, ours []toolschema.Schema, n int) {
	t.Helper()
	path := filepath.Join("..", "..", "transcripts", rec, file)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var side struct {
		Initial []json.RawMessage `json:"initial"`
	}
	if err := json.Unmarshal(data, &side); err != nil {
		t.Fatal(err)
	}
	var expected []toolschema.Expected
	for _, raw := range side.Initial {
		var named struct{ Name string }
		json.Unmarshal(raw, &named)
		expected = append(expected, toolschema.Expected{Name: named.Name, Raw: raw})
	}
	rep := toolschema.Compare(expected, ours)
	if len(rep.Mismatches) > 0 || len(rep.Compared) != n {
		t.Errorf("%s/%s: compared %v, mismatches:\n%s", rec, file, rep.Compared, strings.Join(rep.Mismatches, "\n"))
	}
}
