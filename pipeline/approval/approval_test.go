package approval_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/dshsim/dshsim/internal/waittest"
	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/pipeline/approval"
	"github.com/dshsim/dshsim/pipeline/session"
	"github.com/dshsim/dshsim/pipeline/session/sessiontest"
)

func newLog(t *testing.T, events ...string) *session.Log {
	t.Helper()
	l := sessiontest.New(t, "s1", "/ws")
	for _, e := range events {
		if _, err := l.Append(e, map[string]any{}); err != nil {
			t.Fatal(err)
		}
	}
	return l
}

func answer(o pipeline.ApprovalOutcome) approval.Answerer {
	return func(context.Context, *pipeline.ApprovalRequest, func() (pipeline.ApprovalOutcome, error)) (pipeline.ApprovalOutcome, error) {
		return o, nil
	}
}

type audit struct {
	asked   map[string]any
	decided map[string]any
}

func audits(t *testing.T, l *session.Log) []audit {
	t.Helper()
	var out []audit
	for _, e := range mustEvents(t, l) {
		var m map[string]any
		json.Unmarshal(e.Data, &m)
		switch e.Type {
		case session.KindApprovalAsked:
			out = append(out, audit{asked: m})
		case session.KindApprovalDecided:
			if len(out) == 0 || out[len(out)-1].decided != nil {
				t.Fatalf("approval/decided without a pending approval/asked at seq %d", e.Seq)
			}
			out[len(out)-1].decided = m
		}
	}
	return out
}

func TestRequest(t *testing.T) {
	tests := []struct {
		name      string
		config    approval.Policy
		logPolicy approval.Policy // appended as approval/policy when set
		answerers []approval.Answerer
		prepend   approval.Answerer
		ctx       func() (context.Context, context.CancelFunc)
		req       pipeline.ApprovalRequest
		want      pipeline.ApprovalOutcome
		wantAsked string // JSON of the asked payload without id
	}{
		{name: "no answerer is unavailable", want: pipeline.Unavailable},
		{name: "asked payload has exactly id and toolName when optionals are absent", req: pipeline.ApprovalRequest{ToolName: "echo"}, want: pipeline.Unavailable, wantAsked: `{"toolName":"echo"}`},
		{name: "asked payload carries callId and reason", req: pipeline.ApprovalRequest{ToolName: "bash", CallID: "c9", Reason: "escalate sandbox to workspace-write: x"}, want: pipeline.Unavailable, wantAsked: `{"callId":"c9","reason":"escalate sandbox to workspace-write: x","toolName":"bash"}`},
		{name: "first answering listener wins", answerers: []approval.Answerer{answer(pipeline.AllowedOnce), answer(pipeline.Rejected)}, want: pipeline.AllowedOnce},
		{name: "delegating listener alone is unavailable", answerers: []approval.Answerer{func(ctx context.Context, r *pipeline.ApprovalRequest, next func() (pipeline.ApprovalOutcome, error)) (pipeline.ApprovalOutcome, error) {
			return next()
		}}, want: pipeline.Unavailable},
		{name: "delegating listener lets the next answer", answerers: []approval.Answerer{func(ctx context.Context, r *pipeline.ApprovalRequest, next func() (pipeline.ApprovalOutcome, error)) (pipeline.ApprovalOutcome, error) {
			return next()
		}, answer(pipeline.Rejected)}, want: pipeline.Rejected},
		{name: "erroring answerer is unavailable", answerers: []approval.Answerer{func(context.Context, *pipeline.ApprovalRequest, func() (pipeline.ApprovalOutcome, error)) (pipeline.ApprovalOutcome, error) {
			return "", errors.New("dialog crashed")
		}}, want: pipeline.Unavailable},
		{name: "panicking answerer is unavailable", answerers: []approval.Answerer{func(context.Context, *pipeline.ApprovalRequest, func() (pipeline.ApprovalOutcome, error)) (pipeline.ApprovalOutcome, error) {
			panic("boom")
		}}, want: pipeline.Unavailable},
		{name: "non-vocabulary answer is unavailable", answerers: []approval.Answerer{answer("allow-always")}, want: pipeline.Unavailable},
		{name: "pre-aborted signal is cancelled without asking", answerers: []approval.Answerer{func(context.Context, *pipeline.ApprovalRequest, func() (pipeline.ApprovalOutcome, error)) (pipeline.ApprovalOutcome, error) {
			panic("must not be asked")
		}}, ctx: func() (context.Context, context.CancelFunc) {
			c, cancel := context.WithCancel(context.Background())
			cancel()
			return c, cancel
		}, want: pipeline.Cancelled},
		{name: "config never rejects without consulting answerers", config: approval.Never, answerers: []approval.Answerer{func(context.Context, *pipeline.ApprovalRequest, func() (pipeline.ApprovalOutcome, error)) (pipeline.ApprovalOutcome, error) {
			panic("must not be asked")
		}}, want: pipeline.Rejected},
		{name: "never beats an answerer prepended after mount", config: approval.Never, prepend: answer(pipeline.AllowedOnce), want: pipeline.Rejected},
		{name: "session override never beats config ask", config: approval.Ask, logPolicy: approval.Never, answerers: []approval.Answerer{answer(pipeline.AllowedOnce)}, want: pipeline.Rejected},
		{name: "session override ask beats config never", config: approval.Never, logPolicy: approval.Ask, answerers: []approval.Answerer{answer(pipeline.AllowedOnce)}, want: pipeline.AllowedOnce},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l := newLog(t, "turn/start")
			if tc.logPolicy != "" {
				if _, err := approval.SetSessionPolicy(l, tc.logPolicy); err != nil {
					t.Fatal(err)
				}
			}
			var opts []approval.Option
			if tc.config != "" {
				opts = append(opts, approval.WithPolicy(tc.config))
			}
			svc, err := approval.New(opts...)
			if err != nil {
				t.Fatal(err)
			}
			for _, a := range tc.answerers {
				svc.Answer(a)
			}
			if tc.prepend != nil {
				svc.PrependAnswer(tc.prepend)
			}
			ctx := context.Background()
			if tc.ctx != nil {
				var cancel context.CancelFunc
				ctx, cancel = tc.ctx()
				defer cancel()
			}
			req := tc.req
			if req.ToolName == "" {
				req.ToolName = "echo"
			}
			req.Agent = &pipeline.Agent{ID: "a", Session: l}
			got, err := svc.Request(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("outcome %q, want %q", got, tc.want)
			}
			a := audits(t, l)
			if len(a) != 1 || a[0].decided == nil {
				t.Fatalf("want exactly one asked/decided pair, got %+v", a)
			}
			if a[0].asked["id"] != a[0].decided["id"] || a[0].decided["outcome"] != string(tc.want) {
				t.Errorf("pair mismatch: %+v", a[0])
			}
			if len(a[0].decided) != 2 {
				t.Errorf("decided payload keys %v, want exactly id and outcome", a[0].decided)
			}
			if tc.wantAsked != "" {
				delete(a[0].asked, "id")
				b, _ := json.Marshal(a[0].asked)
				if string(b) != tc.wantAsked {
					t.Errorf("asked payload %s, want %s", b, tc.wantAsked)
				}
			}
		})
	}
}

func TestRequestOutsideOpenTurn(t *testing.T) {
	tests := []struct {
		name   string
		events []string
	}{
		{name: "no turn ever", events: nil},
		{name: "closed turn", events: []string{"turn/start", "turn/end"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l := newLog(t, tc.events...)
			svc, _ := approval.New()
			_, err := svc.Request(context.Background(), pipeline.ApprovalRequest{Agent: &pipeline.Agent{ID: "a", Session: l}, ToolName: "echo"})
			if err == nil || !strings.HasPrefix(err.Error(), "approval.request() outside an open turn") {
				t.Fatalf("err = %v", err)
			}
			if a := audits(t, l); len(a) != 0 {
				t.Errorf("appended %d audit pairs outside a turn", len(a))
			}
		})
	}
}

func TestAbortMidQuestionIsCancelledAndTheLateAnswerDiscarded(t *testing.T) {
	l := newLog(t, "turn/start")
	svc, _ := approval.New()
	release := make(chan struct{})
	var answered atomic.Bool
	svc.Answer(func(ctx context.Context, r *pipeline.ApprovalRequest, next func() (pipeline.ApprovalOutcome, error)) (pipeline.ApprovalOutcome, error) {
		<-release
		answered.Store(true)
		return pipeline.AllowedOnce, nil
	})
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(10 * time.Millisecond); cancel() }()
	var err error
	got := waittest.Call(t, "the request cancelled mid-question to return", func() pipeline.ApprovalOutcome {
		got, e := svc.Request(ctx, pipeline.ApprovalRequest{Agent: &pipeline.Agent{ID: "a", Session: l}, ToolName: "echo"})
		err = e
		return got
	})
	if err != nil || got != pipeline.Cancelled {
		t.Fatalf("got %q, %v", got, err)
	}
	close(release)
	waittest.Until(t, time.Millisecond, "the released answerer to answer", answered.Load)
	time.Sleep(5 * time.Millisecond)
	a := audits(t, l)
	if len(a) != 1 || a[0].decided["outcome"] != "cancelled" {
		t.Errorf("audit %+v", a)
	}
}

func TestFreshIDPerRequest(t *testing.T) {
	l := newLog(t, "turn/start")
	svc, _ := approval.New()
	for i := 0; i < 3; i++ {
		svc.Request(context.Background(), pipeline.ApprovalRequest{Agent: &pipeline.Agent{ID: "a", Session: l}, ToolName: "echo"})
	}
	seen := map[any]bool{}
	for _, a := range audits(t, l) {
		id, _ := a.asked["id"].(string)
		if seen[id] || len(id) != 36 || id[14] != '4' {
			t.Errorf("id %q is not a fresh v4 UUID", id)
		}
		seen[id] = true
	}
	if len(seen) != 3 {
		t.Errorf("%d ids", len(seen))
	}
}

func TestAppendFailureRejectsTheRequest(t *testing.T) {
	l := newLog(t, "turn/start")
	svc, _ := approval.New()
	l.Close()
	_, err := svc.Request(context.Background(), pipeline.ApprovalRequest{Agent: &pipeline.Agent{ID: "a", Session: l}, ToolName: "echo"})
	if err == nil || !strings.Contains(err.Error(), "closed") {
		t.Fatalf("err = %v", err)
	}
}

func TestPolicyFoldAndValidation(t *testing.T) {
	l := newLog(t)
	if _, ok, _ := approval.SessionPolicy(mustEvents(t, l)); ok {
		t.Error("empty log folded to a policy")
	}
	approval.SetSessionPolicy(l, approval.Never)
	approval.SetSessionPolicy(l, approval.Ask)
	if p, ok, _ := approval.SessionPolicy(mustEvents(t, l)); !ok || p != approval.Ask {
		t.Errorf("fold = %q %v, want last event ask", p, ok)
	}
	n := len(mustEvents(t, l))
	if _, err := approval.SetSessionPolicy(l, "sometimes"); err == nil || !strings.HasPrefix(err.Error(), `approval policy must be one of "ask" or "never"`) {
		t.Errorf("invalid policy err = %v", err)
	}
	if len(mustEvents(t, l)) != n {
		t.Error("invalid policy was appended")
	}
	if _, err := approval.New(approval.WithPolicy("sometimes")); err == nil {
		t.Error("invalid configured policy accepted")
	}
	svc, _ := approval.New()
	if svc.ConfiguredPolicy() != approval.Ask {
		t.Error("direct construction must default to ask")
	}
}

func TestSetPolicyAppendsOnceWithTheExactNotice(t *testing.T) {
	l := newLog(t)
	svc, _ := approval.New()
	es, err := svc.SetPolicy(l, approval.Never)
	if err != nil || len(es) != 2 {
		t.Fatalf("events %v err %v", es, err)
	}
	if es[0].Type != session.KindApprovalPolicy || string(es[0].Data) != `{"policy":"never"}` {
		t.Errorf("policy event %s %s", es[0].Type, es[0].Data)
	}
	var m approval.NoticeMessage
	json.Unmarshal(es[1].Data, &m)
	if es[1].Type != "user/message" || m.Content[0].Text != `The approval policy changed from "ask" to "never" (changed by the user).` || m.Role != "user" {
		t.Errorf("notice %s", es[1].Data)
	}
	// upstream's user-approval plugin: a plugin message of user-approval,
	// no form or summary; entered into the conversation (surfaceOp append)
	if len(m.Source) != 2 || m.Source["kind"] != "plugin" || m.Source["plugin"] != "user-approval" {
		t.Errorf("notice source %v, want {kind:plugin, plugin:user-approval}", m.Source)
	}
	if string(es[1].SurfaceOp) != `"append"` {
		t.Errorf("notice surfaceOp %q, want append", es[1].SurfaceOp)
	}
	again, err := svc.SetPolicy(l, approval.Never)
	if err != nil || len(again) != 0 {
		t.Errorf("unchanged switch appended %v", again)
	}
}

func TestContextText(t *testing.T) {
	tests := []struct {
		name string
		p    approval.Policy
		want string
	}{
		{name: "ask sentence", p: approval.Ask, want: "Approval policy: ask. Operations that require approval may ask through the configured answerers; without an available answerer, the request fails closed."},
		{name: "never sentence", p: approval.Never, want: "Approval prompts are disabled in this session: actions that require approval are rejected automatically — do not request sandbox escalation (do not set `sandbox_permissions`)."},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := approval.ContextText(tc.p); got != tc.want {
				t.Errorf("got %q", got)
			}
		})
	}
}

func mustEvents(t *testing.T, l *session.Log) []session.Event {
	t.Helper()
	e, err := l.Events()
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// TestPreCancelledRequestNeverRunsAnAnswerer: a request whose context is
// already done is cancelled without asking anyone, not merely reported
// cancelled while the answerer runs anyway. synctest.Wait waits for every
// goroutine the request started, so an answerer run after Request returned
// is seen too.
func TestPreCancelledRequestNeverRunsAnAnswerer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := newLog(t, "turn/start")
		svc, _ := approval.New()
		var asked atomic.Int32
		svc.Answer(func(context.Context, *pipeline.ApprovalRequest, func() (pipeline.ApprovalOutcome, error)) (pipeline.ApprovalOutcome, error) {
			asked.Add(1)
			return pipeline.AllowedOnce, nil
		})
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		got, err := svc.Request(ctx, pipeline.ApprovalRequest{Agent: &pipeline.Agent{ID: "a", Session: l}, ToolName: "echo"})
		synctest.Wait()
		if err != nil || got != pipeline.Cancelled {
			t.Fatalf("got %q, %v; want cancelled", got, err)
		}
		if n := asked.Load(); n != 0 {
			t.Errorf("the answerer ran %d time(s) for a request cancelled before it was asked", n)
		}
	})
}
