package autoreview_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/pipeline/approval"
	"github.com/dshsim/dshsim/pipeline/autoreview"
	"github.com/dshsim/dshsim/pipeline/session"
	"github.com/dshsim/dshsim/pipeline/session/sessiontest"
)

// rig is a registry with the approval service, a write tool whose body
// records whether it ran with the full-access grant, an agent with a real
// session log (open turn), and a constructed human answerer.
type rig struct {
	t     *testing.T
	r     *pipeline.Registry
	svc   *approval.Service
	gate  *autoreview.Gate
	agent *pipeline.Agent

	mu       sync.Mutex
	ran      []string // "write full=<bool>"
	shown    []string // what the human answerer was shown
	reviewed []autoreview.Subject
}

// reviewer is a constructed reviewer.
type reviewer func(ctx context.Context, s autoreview.Subject) (autoreview.Verdict, error)

func newRig(t *testing.T, cfg autoreview.Config, rev reviewer, human pipeline.ApprovalOutcome) *rig {
	t.Helper()
	x := &rig{t: t, r: pipeline.NewRegistry(pipeline.WithLogf(func(string, ...any) {}))}
	var err error
	if x.svc, err = approval.New(); err != nil {
		t.Fatal(err)
	}
	x.r.SetApprover(x.svc)
	log := sessiontest.New(t, "s1", "/ws")
	sessiontest.StartTurn(t, log)
	x.agent = &pipeline.Agent{ID: "root", Session: log}
	var r autoreview.Reviewer
	if rev != nil {
		r = autoreview.ReviewerFunc(func(ctx context.Context, s autoreview.Subject) (autoreview.Verdict, error) {
			x.mu.Lock()
			x.reviewed = append(x.reviewed, s)
			x.mu.Unlock()
			return rev(ctx, s)
		})
	}
	if cfg.Name == "" {
		cfg.Name = "constructed reviewer"
	}
	if x.gate, err = autoreview.New(cfg, r); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"write", "read"} {
		name := name
		x.r.Register(pipeline.Tool{Name: name, Run: func(ctx context.Context, call *pipeline.Call) (pipeline.Output, error) {
			x.mu.Lock()
			x.ran = append(x.ran, name+" full="+map[bool]string{true: "yes", false: "no"}[x.gate.FullAccess(call)])
			x.mu.Unlock()
			return pipeline.Output{Content: []pipeline.Block{pipeline.TextBlock(name + " done")}}, nil
		}})
	}
	if human != "" {
		x.svc.Answer(func(ctx context.Context, req *pipeline.ApprovalRequest, next func() (pipeline.ApprovalOutcome, error)) (pipeline.ApprovalOutcome, error) {
			shown := req.Reason
			if req.DisplayReason != nil {
				shown = req.DisplayReason.En
			}
			x.mu.Lock()
			x.shown = append(x.shown, shown)
			x.mu.Unlock()
			return human, nil
		})
	}
	if _, err := x.gate.Install(x.r.In(x.agent.Scope()), x.svc.In(x.agent.Scope())); err != nil {
		t.Fatal(err)
	}
	return x
}

// reviews returns a copy of what the reviewer was asked (it runs in its own goroutine).
func (x *rig) reviews() []autoreview.Subject {
	x.mu.Lock()
	defer x.mu.Unlock()
	return append([]autoreview.Subject(nil), x.reviewed...)
}

func (x *rig) call(tool string) (*pipeline.Call, pipeline.Result) {
	c := pipeline.NewCall("call-"+tool, tool, json.RawMessage(`{"path":"/outside/x"}`), x.agent, context.Background())
	return c, x.execute(c)
}

// callDeadline bounds every call of these tests: a review that waits for a
// verdict its deadline should have cut off fails the test, not the package.
const callDeadline = 30 * time.Second

// execute runs call and fails the test when it has not returned within
// callDeadline (the call's goroutine is left to the reviewer's release).
func (x *rig) execute(call *pipeline.Call) pipeline.Result {
	x.t.Helper()
	done := make(chan pipeline.Result, 1)
	go func() { done <- x.r.Execute(call) }()
	select {
	case res := <-done:
		return res
	case <-time.After(callDeadline):
		x.t.Fatalf("call %s did not return within %s", call.CallID(), callDeadline)
		return pipeline.Result{}
	}
}

// audit renders the approval and auto-review events of the log.
func (x *rig) audit(t *testing.T) string {
	t.Helper()
	events, err := x.agent.Session.Events()
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, e := range events {
		var m map[string]any
		json.Unmarshal(e.Data, &m)
		switch e.Type {
		case session.KindApprovalAsked:
			lines = append(lines, "asked reason="+str(m["reason"]))
		case session.KindAutoReviewDecided:
			l := "review " + str(m["outcome"]) + " by " + str(m["reviewer"])
			if m["risk"] != nil {
				l += " risk=" + str(m["risk"])
			}
			if m["error"] != nil {
				l += " error=" + str(m["error"])
			}
			lines = append(lines, l)
		case session.KindApprovalDecided:
			lines = append(lines, "decided "+str(m["outcome"]))
		}
	}
	return strings.Join(lines, "\n")
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

func approve(context.Context, autoreview.Subject) (autoreview.Verdict, error) {
	return autoreview.Verdict{Approve: true, Risk: "low", Rationale: "Writes one file the task asked for."}, nil
}

func reject(context.Context, autoreview.Subject) (autoreview.Verdict, error) {
	return autoreview.Verdict{Risk: "high", Rationale: "Writes outside the project."}, nil
}

func TestAutoReview(t *testing.T) {
	on := autoreview.Config{Enabled: true, Timeout: 200 * time.Millisecond}
	block := make(chan struct{})
	t.Cleanup(func() { close(block) })
	const asked = "asked reason=" + autoreview.AskReason
	tests := []struct {
		name   string
		cfg    autoreview.Config
		rev    reviewer
		human  pipeline.ApprovalOutcome
		tool   string
		text   string // model-facing text
		ran    string
		shown  string // what the human saw ("" not asked)
		audit  string
		review bool // the reviewer was asked
	}{
		{name: "switch off: nothing is reviewed, nothing is asked", cfg: autoreview.Config{}, rev: approve, human: pipeline.Rejected,
			tool: "write", text: "write done", ran: "write full=no"},
		{name: "approved: runs once with full access, the human is not asked", cfg: on, rev: approve, human: pipeline.Rejected,
			tool: "write", text: "write done", ran: "write full=yes", review: true,
			audit: asked + "\nreview approved by constructed reviewer risk=low\ndecided allowed-once"},
		{name: "rejected: the human is asked with the verdict and allows once, without full access", cfg: on, rev: reject, human: pipeline.AllowedOnce,
			tool: "write", text: "write done", ran: "write full=no", review: true,
			shown: "The auto reviewer rejected this call (risk high): Writes outside the project. Allow it once, under the standing sandbox?",
			audit: asked + "\nreview rejected by constructed reviewer risk=high\ndecided allowed-once"},
		{name: "rejected: the human says no", cfg: on, rev: reject, human: pipeline.Rejected,
			tool: "write", text: `Error: the user rejected tool "write"`, review: true,
			shown: "The auto reviewer rejected this call (risk high): Writes outside the project. Allow it once, under the standing sandbox?",
			audit: asked + "\nreview rejected by constructed reviewer risk=high\ndecided rejected"},
		{name: "rejected with no human answerer: unavailable", cfg: on, rev: reject,
			tool: "write", text: `Error: tool "write" requires approval, but no approval channel is available`, review: true,
			audit: asked + "\nreview rejected by constructed reviewer risk=high\ndecided unavailable"},
		{name: "reviewer error fails closed: refused, the human is not asked", cfg: on, human: pipeline.AllowedOnce,
			rev: func(context.Context, autoreview.Subject) (autoreview.Verdict, error) {
				return autoreview.Verdict{}, errors.New("model endpoint returned 503")
			},
			tool: "write", text: `Error: tool "write" requires approval, but no approval channel is available`, review: true,
			audit: asked + "\nreview error by constructed reviewer error=model endpoint returned 503\ndecided unavailable"},
		{name: "reviewer panic fails closed", cfg: on, human: pipeline.AllowedOnce,
			rev:  func(context.Context, autoreview.Subject) (autoreview.Verdict, error) { panic("reviewer bug") },
			tool: "write", text: `Error: tool "write" requires approval, but no approval channel is available`, review: true,
			audit: asked + "\nreview error by constructed reviewer error=reviewer panicked: reviewer bug\ndecided unavailable"},
		{name: "reviewer ignoring its deadline times out closed", cfg: on, human: pipeline.AllowedOnce,
			rev: func(context.Context, autoreview.Subject) (autoreview.Verdict, error) {
				<-block
				return autoreview.Verdict{Approve: true, Risk: "low", Rationale: "late"}, nil
			},
			tool: "write", text: `Error: tool "write" requires approval, but no approval channel is available`, review: true,
			audit: asked + "\nreview timeout by constructed reviewer error=no verdict within 200ms\ndecided unavailable"},
		{name: "reviewer honouring its deadline times out closed", cfg: on, human: pipeline.AllowedOnce,
			rev: func(ctx context.Context, _ autoreview.Subject) (autoreview.Verdict, error) {
				<-ctx.Done()
				return autoreview.Verdict{}, ctx.Err()
			},
			tool: "write", text: `Error: tool "write" requires approval, but no approval channel is available`, review: true,
			audit: asked + "\nreview timeout by constructed reviewer error=no verdict within 200ms\ndecided unavailable"},
		{name: "a tool outside the reviewed list is not reviewed", cfg: autoreview.Config{Enabled: true, Tools: []string{"write"}}, rev: reject, human: pipeline.Rejected,
			tool: "read", text: "read done", ran: "read full=no"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			x := newRig(t, tc.cfg, tc.rev, tc.human)
			call, res := x.call(tc.tool)
			if res.Text() != tc.text {
				t.Errorf("text %q, want %q", res.Text(), tc.text)
			}
			if got := strings.Join(x.ran, ";"); got != tc.ran {
				t.Errorf("ran %q, want %q", got, tc.ran)
			}
			if got := strings.Join(x.shown, ";"); got != tc.shown {
				t.Errorf("human shown %q, want %q", got, tc.shown)
			}
			if got := x.audit(t); got != tc.audit {
				t.Errorf("audit\n%s\nwant\n%s", got, tc.audit)
			}
			// A timed-out reviewer's goroutine may not even have started
			// when the deadline passed; its audit event says it was asked.
			timedOut := strings.Contains(tc.audit, "review timeout")
			if got := len(x.reviews()) > 0; got != tc.review && !timedOut {
				t.Errorf("reviewed %v, want %v", got, tc.review)
			}
			if x.gate.FullAccess(call) {
				t.Error("the full-access grant outlived the call")
			}
		})
	}
}

// TestAutoReviewLeavesOtherDecisions: the gate lets every other listener
// decide first: a deny or a cancel stands without a review; an ask is
// reviewed with the policy's own reason.
func TestAutoReviewLeavesOtherDecisions(t *testing.T) {
	tests := []struct {
		name     string
		decision pipeline.Decision
		text     string
		reviewed string // the reason the reviewer saw, "" not reviewed
	}{
		{"deny stands", pipeline.Deny("policy says no"), "Error: policy says no", ""},
		{"cancel stands", pipeline.Cancel(), "Error: tool call aborted before dispatch", ""},
		{"an ask is reviewed with its reason", pipeline.Ask("hook asks about writes"), "write done", "hook asks about writes"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			x := newRig(t, autoreview.Config{Enabled: true}, approve, pipeline.Rejected)
			// Registered after the gate's prepended listener, so inside it.
			x.r.OnPreExecute(func(context.Context, *pipeline.Call, func() (pipeline.Decision, error)) (pipeline.Decision, error) {
				return tc.decision, nil
			})
			_, res := x.call("write")
			if res.Text() != tc.text {
				t.Errorf("text %q, want %q", res.Text(), tc.text)
			}
			got := ""
			if len(x.reviews()) == 1 {
				got = x.reviews()[0].Reason
			}
			if got != tc.reviewed {
				t.Errorf("reviewer saw reason %q, want %q (reviews: %d)", got, tc.reviewed, len(x.reviews()))
			}
		})
	}
}

// TestAutoReviewCannotBeatAGuard: a scoped guard's deny stands after the
// reviewer approved, the body does not run and the grant is dropped.
func TestAutoReviewCannotBeatAGuard(t *testing.T) {
	x := newRig(t, autoreview.Config{Enabled: true}, approve, pipeline.AllowedOnce)
	if _, err := x.r.In(x.agent.Scope()).AddGuard(func(context.Context, *pipeline.Call) (string, bool) {
		return "this step is read-only", true
	}); err != nil {
		t.Fatal(err)
	}
	call, res := x.call("write")
	if res.Text() != "Error: this step is read-only" || len(x.ran) != 0 || x.gate.FullAccess(call) {
		t.Fatalf("text %q, ran %v, grant %v", res.Text(), x.ran, x.gate.FullAccess(call))
	}
	if len(x.reviews()) != 1 {
		t.Fatalf("reviews %d, want 1 (the reviewer answers; the guard still decides)", len(x.reviews()))
	}
}

// TestNeverPolicyBeatsTheReviewer: under approval policy never the converted
// ask is rejected before any answerer runs, the reviewer included.
func TestNeverPolicyBeatsTheReviewer(t *testing.T) {
	x := newRig(t, autoreview.Config{Enabled: true}, approve, pipeline.AllowedOnce)
	if _, err := approval.SetSessionPolicy(x.agent.Session, approval.Never); err != nil {
		t.Fatal(err)
	}
	if _, res := x.call("write"); res.Text() != `Error: the user rejected tool "write"` || len(x.reviews()) != 0 {
		t.Fatalf("text %q, reviews %d", res.Text(), len(x.reviews()))
	}
}

// TestEscalationAsksGoToTheHuman: an ask made from inside a tool body (no
// Call on the request, like a sandbox escalation) is not reviewed.
func TestEscalationAsksGoToTheHuman(t *testing.T) {
	x := newRig(t, autoreview.Config{Enabled: true}, approve, pipeline.Rejected)
	got, err := x.svc.Request(context.Background(), pipeline.ApprovalRequest{Agent: x.agent, ToolName: "write", Reason: "escalate sandbox to danger-full-access: needs /outside"})
	if err != nil || got != pipeline.Rejected || len(x.reviews()) != 0 {
		t.Fatalf("outcome %v, %v, reviews %d; want the human's rejected and no review", got, err, len(x.reviews()))
	}
}

// TestAutoReviewIsScoped: installed for one agent, the gate never reviews a
// sibling's calls (a delegated child is not below its parent's scope).
func TestAutoReviewIsScoped(t *testing.T) {
	x := newRig(t, autoreview.Config{Enabled: true}, reject, pipeline.Rejected)
	preset := pipeline.NewScope("agentPreset:standard")
	x.agent.Scope().Bind(preset)
	child := &pipeline.Agent{ID: "child", Session: x.agent.Session}
	child.Scope().Bind(preset)
	res := x.execute(pipeline.NewCall("c1", "write", json.RawMessage(`{}`), child, context.Background()))
	if res.Text() != "write done" || len(x.reviews()) != 0 {
		t.Fatalf("child's call: %q, reviews %d", res.Text(), len(x.reviews()))
	}
	x.agent.Scope().End()
	if res := x.execute(pipeline.NewCall("c2", "write", json.RawMessage(`{}`), child, context.Background())); res.Text() != "write done" {
		t.Fatalf("child's call after the parent's scope ended: %q", res.Text())
	}
}

// TestCancelledDuringReview: the caller cancelling while the reviewer thinks
// ends the call before dispatch; nothing runs with the grant.
func TestCancelledDuringReview(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	x := newRig(t, autoreview.Config{Enabled: true}, func(rctx context.Context, _ autoreview.Subject) (autoreview.Verdict, error) {
		cancel()
		<-rctx.Done()
		return autoreview.Verdict{Approve: true, Risk: "low", Rationale: "late"}, nil
	}, pipeline.AllowedOnce)
	call := pipeline.NewCall("c1", "write", json.RawMessage(`{}`), x.agent, ctx)
	res := x.execute(call)
	if res.Text() != "Error: tool call aborted before dispatch" || len(x.ran) != 0 || x.gate.FullAccess(call) {
		t.Fatalf("text %q, ran %v", res.Text(), x.ran)
	}
}

func TestNewValidates(t *testing.T) {
	tests := []struct {
		cfg  autoreview.Config
		rev  autoreview.Reviewer
		want string
	}{
		{autoreview.Config{}, nil, ""},
		{autoreview.Config{Enabled: true, Name: "m"}, nil, "autoreview: enabled without a reviewer"},
		{autoreview.Config{Enabled: true}, autoreview.ReviewerFunc(approve), "autoreview: the reviewer needs a name for the audit"},
		{autoreview.Config{Timeout: -time.Second}, nil, "autoreview: timeout must be >= 0, got -1s"},
	}
	for _, tc := range tests {
		_, err := autoreview.New(tc.cfg, tc.rev)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tc.want {
			t.Errorf("New(%+v): %q, want %q", tc.cfg, got, tc.want)
		}
	}
}
