package escalation_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/dshsim/dshsim/escalation"
	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/pipeline/approval"
	"github.com/dshsim/dshsim/pipeline/policy"
	"github.com/dshsim/dshsim/pipeline/session"
	"github.com/dshsim/dshsim/pipeline/session/sessiontest"
	"github.com/dshsim/dshsim/sandbox"
)

func TestWiderModesTableInvariant(t *testing.T) {
	// Each mode widens to exactly the modes after it in sandbox.Modes.
	for i, m := range sandbox.Modes {
		want := sandbox.Modes[i+1:]
		if got := escalation.WiderModes[m]; !slices.Equal(got, want) && !(len(got) == 0 && len(want) == 0) {
			t.Errorf("WiderModes[%s] = %v, want %v", m, got, want)
		}
		for j, n := range sandbox.Modes {
			if escalation.IsWider(m, n) != (j > i) {
				t.Errorf("IsWider(%s, %s) = %v", m, n, j > i)
			}
		}
	}
	if len(escalation.WiderModes[sandbox.DangerFullAccess]) != 0 || len(escalation.WiderModes["bogus"]) != 0 {
		t.Error("danger-full-access and unknown modes must widen to nothing")
	}
	if !slices.Equal(escalation.Targets, []sandbox.Mode{sandbox.WorkspaceWrite, sandbox.DangerFullAccess}) {
		t.Errorf("Targets = %v", escalation.Targets)
	}
}

// TestVerbatimTexts: the model-facing texts of an escalation, byte for byte:
// the schema descriptions and the markers a denial ends with.
func TestVerbatimTexts(t *testing.T) {
	tests := []struct{ name, got, want string }{
		{name: "denial marker under read-only", got: sandbox.DenialMarker(sandbox.ReadOnly), want: "[sandbox: file access denied under read-only mode]"},
		{name: "denial marker under workspace-write", got: sandbox.DenialMarker(sandbox.WorkspaceWrite), want: "[sandbox: file access denied under workspace-write mode]"},
		{name: "hint names the exact command", got: sandbox.EscalationHint(escalation.SubjectCommand), want: "[sandbox: escalation available — retry this exact command once with sandbox_permissions (the narrowest wider mode that suffices) + justification; the approval prompt asks the user]"},
		{name: "hint names the exact operation", got: sandbox.EscalationHint(escalation.SubjectOperation), want: "[sandbox: escalation available — retry this exact operation once with sandbox_permissions (the narrowest wider mode that suffices) + justification; the approval prompt asks the user]"},
		{name: "sandbox_permissions for bash names the command", got: escalation.PermissionsDescription(escalation.SubjectCommand), want: "The wider sandbox mode this command needs. Only valid as a one-shot retry of a command the sandbox just denied; requires justification and user approval."},
		{name: "sandbox_permissions for fs names the operation", got: escalation.PermissionsDescription(escalation.SubjectOperation), want: "The wider sandbox mode this file operation needs. Only valid as a one-shot retry of an operation the sandbox just denied; requires justification and user approval."},
		{name: "justification for bash", got: escalation.JustificationDescription(escalation.SubjectCommand), want: "Required with sandbox_permissions: one sentence for the user explaining why this exact command needs the wider access."},
		{name: "justification for fs", got: escalation.JustificationDescription(escalation.SubjectOperation), want: "Required with sandbox_permissions: one sentence for the user explaining why this exact file operation needs the wider access."},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.got != tc.want {
				t.Errorf("got  %q\nwant %q", tc.got, tc.want)
			}
		})
	}
	b := pipeline.ObjectSchema(escalation.SchemaParams(escalation.SubjectCommand), nil)
	want := `{"type":"object","properties":{"sandbox_permissions":{"type":"string","description":"The wider sandbox mode this command needs. Only valid as a one-shot retry of a command the sandbox just denied; requires justification and user approval.","enum":["workspace-write","danger-full-access"]},` +
		`"justification":{"type":"string","description":"Required with sandbox_permissions: one sentence for the user explaining why this exact command needs the wider access."}}}`
	if string(b) != want {
		t.Errorf("schema\n%s\nwant (upstream's recorded text and key order)\n%s", b, want)
	}
}

func p(s string) *string { return &s }

func TestPairing(t *testing.T) {
	tests := []struct {
		name string
		args escalation.Args
		want string
	}{
		{name: "neither field is accepted", args: escalation.Args{}},
		{name: "both with a sentence are accepted", args: escalation.Args{SandboxPermissions: p("workspace-write"), Justification: p("needed")}},
		{name: "permissions without justification", args: escalation.Args{SandboxPermissions: p("workspace-write")}, want: "invalid escalation: sandbox_permissions requires a justification"},
		{name: "justification without permissions", args: escalation.Args{Justification: p("needed")}, want: "invalid escalation: justification is only valid together with sandbox_permissions"},
		{name: "blank justification", args: escalation.Args{SandboxPermissions: p("workspace-write"), Justification: p("  \t")}, want: "invalid justification: expected a non-empty sentence"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := escalation.CheckPairing(tc.args)
			if got := errText(err); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func TestPlan(t *testing.T) {
	tests := []struct {
		name     string
		plan     func(escalation.Args, sandbox.Mode) (escalation.Request, bool, error)
		args     escalation.Args
		standing sandbox.Mode
		escalate bool
		want     string
	}{
		{name: "bash same-mode request skips pairing and asks nothing", plan: escalation.PlanCommand, args: escalation.Args{SandboxPermissions: p("workspace-write")}, standing: sandbox.WorkspaceWrite},
		{name: "bash blank justification alone is ignored", plan: escalation.PlanCommand, args: escalation.Args{Justification: p(" ")}, standing: sandbox.ReadOnly},
		{name: "bash justification alone is refused", plan: escalation.PlanCommand, args: escalation.Args{Justification: p("why")}, standing: sandbox.ReadOnly, want: "invalid escalation: justification is only valid together with sandbox_permissions"},
		{name: "bash wider request escalates", plan: escalation.PlanCommand, args: escalation.Args{SandboxPermissions: p("danger-full-access"), Justification: p("why")}, standing: sandbox.ReadOnly, escalate: true},
		{name: "bash wider request without justification is refused", plan: escalation.PlanCommand, args: escalation.Args{SandboxPermissions: p("danger-full-access")}, standing: sandbox.ReadOnly, want: "invalid escalation: sandbox_permissions requires a justification"},
		{name: "fs same-mode request still needs pairing", plan: escalation.PlanOperation, args: escalation.Args{SandboxPermissions: p("workspace-write")}, standing: sandbox.WorkspaceWrite, want: "invalid escalation: sandbox_permissions requires a justification"},
		{name: "fs blank justification alone is refused", plan: escalation.PlanOperation, args: escalation.Args{Justification: p(" ")}, standing: sandbox.ReadOnly, want: "invalid escalation: justification is only valid together with sandbox_permissions"},
		{name: "fs paired same-mode request plans an escalation Approve returns at once", plan: escalation.PlanOperation, args: escalation.Args{SandboxPermissions: p("workspace-write"), Justification: p("x")}, standing: sandbox.WorkspaceWrite, escalate: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req, esc, err := tc.plan(tc.args, tc.standing)
			if errText(err) != tc.want || esc != tc.escalate {
				t.Fatalf("escalate=%v err=%q, want %v %q", esc, errText(err), tc.escalate, tc.want)
			}
			if esc && (req.Effective != tc.standing || string(req.Requested) != *tc.args.SandboxPermissions) {
				t.Errorf("request %+v", req)
			}
		})
	}
}

// recordingApprover is a constructed approval service.
type recordingApprover struct {
	outcome pipeline.ApprovalOutcome
	asked   []pipeline.ApprovalRequest
}

func (r *recordingApprover) Request(ctx context.Context, req pipeline.ApprovalRequest) (pipeline.ApprovalOutcome, error) {
	r.asked = append(r.asked, req)
	return r.outcome, nil
}

func TestApprove(t *testing.T) {
	agent := &pipeline.Agent{ID: "a"}
	tests := []struct {
		name      string
		req       escalation.Request
		approver  *recordingApprover
		noAgent   bool
		wantMode  sandbox.Mode
		wantErr   string
		wantAsked bool
	}{
		{name: "grant returns the requested mode with the exact reason", req: escalation.Request{Requested: "workspace-write", Justification: "the user asked to write in the workspace", Effective: "read-only", Subject: "command"}, approver: &recordingApprover{outcome: pipeline.AllowedOnce}, wantMode: "workspace-write", wantAsked: true},
		{name: "same-mode request is a no-op without approval", req: escalation.Request{Requested: "read-only", Justification: "x", Effective: "read-only"}, approver: &recordingApprover{outcome: pipeline.Rejected}, wantMode: "read-only"},
		{name: "narrower request is refused without a prompt", req: escalation.Request{Requested: "workspace-write", Justification: "x", Effective: "danger-full-access"}, approver: &recordingApprover{outcome: pipeline.AllowedOnce}, wantErr: `sandbox escalation to "workspace-write" is not strictly wider than this call's current "danger-full-access" mode`},
		{name: "unknown standing mode is never widened", req: escalation.Request{Requested: "danger-full-access", Justification: "x", Effective: "weird"}, approver: &recordingApprover{outcome: pipeline.AllowedOnce}, wantErr: `sandbox escalation to "danger-full-access" is not strictly wider than this call's current "weird" mode`},
		{name: "missing approval service", req: escalation.Request{Requested: "workspace-write", Justification: "x", Effective: "read-only"}, wantErr: `sandbox escalation to "workspace-write" requires approval, but no approval service is composed`},
		{name: "missing agent", req: escalation.Request{Requested: "workspace-write", Justification: "x", Effective: "read-only"}, approver: &recordingApprover{outcome: pipeline.AllowedOnce}, noAgent: true, wantErr: `sandbox escalation to "workspace-write" requires approval, but the call has no agent to route it through`},
		{name: "rejected for an operation", req: escalation.Request{Requested: "workspace-write", Justification: "x", Effective: "read-only", Subject: "operation"}, approver: &recordingApprover{outcome: pipeline.Rejected}, wantErr: `the user rejected escalating this operation to "workspace-write"`, wantAsked: true},
		{name: "rejected for a command matches the recording", req: escalation.Request{Requested: "danger-full-access", Justification: "x", Effective: "workspace-write", Subject: "command"}, approver: &recordingApprover{outcome: pipeline.Rejected}, wantErr: `the user rejected escalating this command to "danger-full-access"`, wantAsked: true},
		{name: "cancelled", req: escalation.Request{Requested: "workspace-write", Justification: "x", Effective: "read-only"}, approver: &recordingApprover{outcome: pipeline.Cancelled}, wantErr: `approval for escalating to "workspace-write" was cancelled`, wantAsked: true},
		{name: "unavailable", req: escalation.Request{Requested: "workspace-write", Justification: "x", Effective: "read-only"}, approver: &recordingApprover{outcome: pipeline.Unavailable}, wantErr: `sandbox escalation to "workspace-write" requires approval, but no approval channel is available`, wantAsked: true},
		{name: "outcome outside the union hits the exhaustiveness guard", req: escalation.Request{Requested: "workspace-write", Justification: "x", Effective: "read-only"}, approver: &recordingApprover{outcome: "granted"}, wantErr: `unreachable variant in EscalationOutcome: "granted"`, wantAsked: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			deps := escalation.Deps{Agent: agent, CallID: "c1", ToolName: "bash"}
			if tc.approver != nil {
				deps.Approver = tc.approver
			}
			if tc.noAgent {
				deps.Agent = nil
			}
			mode, err := escalation.Approve(context.Background(), tc.req, deps)
			if errText(err) != tc.wantErr || mode != tc.wantMode {
				t.Fatalf("mode %q err %q, want %q %q", mode, errText(err), tc.wantMode, tc.wantErr)
			}
			asked := tc.approver != nil && len(tc.approver.asked) > 0
			if asked != tc.wantAsked {
				t.Fatalf("asked = %v, want %v", asked, tc.wantAsked)
			}
			if asked {
				r := tc.approver.asked[0]
				if r.Reason != "escalate sandbox to "+string(tc.req.Requested)+": "+tc.req.Justification || r.ToolName != "bash" || r.CallID != "c1" || r.Agent != agent {
					t.Errorf("request %+v", r)
				}
				if r.DisplayReason == nil || r.DisplayReason.En != "Allow this operation with "+string(tc.req.Requested)+" permissions: "+tc.req.Justification {
					t.Errorf("display reason %+v", r.DisplayReason)
				}
			}
		})
	}
}

// newLog returns a fresh session log (no turn open), closed when the test ends.
func newLog(t *testing.T) *session.Log {
	t.Helper()
	return sessiontest.New(t, "s", "/ws")
}

func TestApproveWithRealServiceNeverAndOutsideTurn(t *testing.T) {
	l := newLog(t)
	svc, _ := approval.New(approval.WithPolicy(approval.Never))
	esc := escalation.New(svc)
	call := pipeline.NewCall("c1", "bash", json.RawMessage(`{}`), &pipeline.Agent{ID: "a", Session: l}, nil)
	req := escalation.Request{Requested: "danger-full-access", Justification: "j", Effective: "read-only", Subject: "command"}
	if _, err := esc(context.Background(), call, req); err == nil || !strings.Contains(err.Error(), "approval.request() outside an open turn") {
		t.Errorf("outside turn: %v", err)
	}
	sessiontest.StartTurn(t, l)
	if _, err := esc(context.Background(), call, req); errText(err) != `the user rejected escalating this command to "danger-full-access"` {
		t.Errorf("never: %v", err)
	}
}

// TestApprovedModeNeverLeaks runs 100 escalating calls in parallel through
// the real pipeline, approval service and policy resolver, each asking for a
// mode, some approved and some rejected; every call must run under its own
// grant, the session's standing mode must stay unchanged, and nothing is stored.
func TestApprovedModeNeverLeaks(t *testing.T) {
	l := newLog(t)
	sessiontest.StartTurn(t, l)
	resolver, err := policy.NewResolver(policy.Config{DefaultMode: sandbox.ReadOnly, Root: "/ws"})
	if err != nil {
		t.Fatal(err)
	}
	svc, _ := approval.New()
	svc.Answer(func(ctx context.Context, req *pipeline.ApprovalRequest, next func() (pipeline.ApprovalOutcome, error)) (pipeline.ApprovalOutcome, error) {
		var n int
		fmt.Sscanf(req.CallID, "call-%d", &n)
		if n%3 == 0 {
			return pipeline.Rejected, nil
		}
		return pipeline.AllowedOnce, nil
	})
	opening := escalation.Opening{Subject: escalation.SubjectCommand, Escalate: escalation.New(svc), Standing: func(call *pipeline.Call) (sandbox.Policy, error) {
		return resolver.Resolve(call.Agent(), "")
	}}
	reg := pipeline.NewRegistry()
	reg.Register(pipeline.Tool{Name: "probe", Run: func(ctx context.Context, call *pipeline.Call) (pipeline.Output, error) {
		final, err := opening.OpenCall(ctx, call)
		if err != nil {
			return pipeline.Output{}, err
		}
		return pipeline.Output{Content: []pipeline.Block{pipeline.TextBlock(string(final.Mode))}}, nil
	}})
	agent := &pipeline.Agent{ID: "a", Session: l}
	modes := []string{"", "workspace-write", "danger-full-access", "read-only"}
	results := make([]pipeline.Result, 100)
	var wg sync.WaitGroup
	for i := 0; i < 100; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			args := `{}`
			if m := modes[i%4]; m != "" {
				args = fmt.Sprintf(`{"sandbox_permissions":%q,"justification":"call %d"}`, m, i)
			}
			results[i] = reg.Execute(pipeline.NewCall(fmt.Sprintf("call-%d", i), "probe", json.RawMessage(args), agent, nil))
		}(i)
	}
	wg.Wait()
	for i, res := range results {
		m := modes[i%4]
		want := string(m)
		switch {
		case m == "" || m == "read-only":
			want = "read-only"
		case i%3 == 0:
			want = fmt.Sprintf("Error: the user rejected escalating this command to %q", m)
		}
		if res.Text() != want {
			t.Errorf("call %d asked %q: got %q, want %q", i, m, res.Text(), want)
		}
	}
	events, _ := l.Events()
	if _, ok := session.Last(events, session.KindSandboxMode); ok {
		t.Error("a grant was stored as a sandbox/mode event")
	}
	if pol, _ := resolver.Resolve(agent, ""); pol.Mode != sandbox.ReadOnly {
		t.Errorf("standing mode after the grants = %s", pol.Mode)
	}
}

func TestPanickingApproverNeverGrants(t *testing.T) {
	mode, err := escalation.Approve(context.Background(),
		escalation.Request{Requested: "danger-full-access", Justification: "j", Effective: "read-only"},
		escalation.Deps{Approver: panicky{}, Agent: &pipeline.Agent{ID: "a"}})
	if err == nil || mode != "" {
		t.Fatalf("mode %q err %v", mode, err)
	}
}

type panicky struct{}

func (panicky) Request(context.Context, pipeline.ApprovalRequest) (pipeline.ApprovalOutcome, error) {
	panic("approval service bug")
}
