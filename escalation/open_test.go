package escalation_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/dshsim/dshsim/escalation"
	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/sandbox"
)

func TestDecodeArgs(t *testing.T) {
	notString := func(key string, v json.RawMessage) error { return fmt.Errorf("%s=%s", key, v) }
	tests := []struct {
		name    string
		obj     string
		perms   *string
		justif  *string
		wantErr string
	}{
		{name: "absent fields are nil", obj: `{}`},
		{name: "null is absent", obj: `{"sandbox_permissions":null,"justification":null}`},
		{name: "strings are kept as sent", obj: `{"sandbox_permissions":"workspace-write","justification":"  why "}`, perms: p("workspace-write"), justif: p("  why ")},
		{name: "a non-string is the tool's error", obj: `{"justification":7}`, wantErr: "justification=7"},
		{name: "sandbox_permissions is checked first", obj: `{"justification":7,"sandbox_permissions":true}`, wantErr: "sandbox_permissions=true"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var obj map[string]json.RawMessage
			if err := json.Unmarshal([]byte(tc.obj), &obj); err != nil {
				t.Fatal(err)
			}
			for i := 0; i < 20; i++ { // map order must not matter
				a, err := escalation.DecodeArgs(obj, notString)
				if errText(err) != tc.wantErr || !samePtr(a.SandboxPermissions, tc.perms) || !samePtr(a.Justification, tc.justif) {
					t.Fatalf("DecodeArgs(%s) = %+v, %v; want %v %v %q", tc.obj, a, err, tc.perms, tc.justif, tc.wantErr)
				}
			}
		})
	}
}

func samePtr(a, b *string) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }

// askRecorder is an escalation function that records what it was asked and
// grants or refuses.
type askRecorder struct {
	asked []escalation.Request
	err   error
}

func (r *askRecorder) ask(_ context.Context, _ *pipeline.Call, req escalation.Request) (sandbox.Mode, error) {
	r.asked = append(r.asked, req)
	return req.Requested, r.err
}

func TestOpen(t *testing.T) {
	ws := t.TempDir()
	standing := func(m sandbox.Mode) func(*pipeline.Call) (sandbox.Policy, error) {
		return func(*pipeline.Call) (sandbox.Policy, error) {
			return sandbox.Policy{Mode: m, WorkspaceRoot: ws, SessionID: "s"}, nil
		}
	}
	broken := func(*pipeline.Call) (sandbox.Policy, error) {
		return sandbox.Policy{}, errors.New("policy: log unreadable")
	}
	notHere := errors.New("not here")
	both := func(m string) escalation.Args {
		return escalation.Args{SandboxPermissions: p(m), Justification: p("needed")}
	}
	tests := []struct {
		name     string
		open     escalation.Opening
		args     escalation.Args
		refuse   error // the recorder's answer
		wantMode sandbox.Mode
		wantErr  string
		wantAsk  int
	}{
		{name: "no fields: the standing policy, no prompt", open: escalation.Opening{Subject: escalation.SubjectCommand, Standing: standing(sandbox.ReadOnly)}, wantMode: sandbox.ReadOnly},
		{name: "command: the standing mode asked for is a no-op even without a justification", open: escalation.Opening{Subject: escalation.SubjectCommand, Standing: standing(sandbox.ReadOnly), Unconfined: notHere},
			args: escalation.Args{SandboxPermissions: p("read-only")}, wantMode: sandbox.ReadOnly},
		{name: "command: a widening is asked and granted for this call", open: escalation.Opening{Subject: escalation.SubjectCommand, Standing: standing(sandbox.ReadOnly)},
			args: both("workspace-write"), wantMode: sandbox.WorkspaceWrite, wantAsk: 1},
		{name: "command: a refusal is the call's error", open: escalation.Opening{Subject: escalation.SubjectCommand, Standing: standing(sandbox.ReadOnly)},
			args: both("workspace-write"), refuse: errors.New("the user said no"), wantErr: "the user said no", wantAsk: 1},
		{name: "command: a tool that does not confine refuses a widening before asking", open: escalation.Opening{Subject: escalation.SubjectCommand, Standing: standing(sandbox.ReadOnly), Unconfined: notHere},
			args: both("workspace-write"), wantErr: "not here"},
		{name: "command: the standing policy is resolved before the pairing", open: escalation.Opening{Subject: escalation.SubjectCommand, Standing: broken},
			args: escalation.Args{SandboxPermissions: p("workspace-write")}, wantErr: "policy: log unreadable"},
		{name: "operation: the pairing is checked before the standing policy", open: escalation.Opening{Subject: escalation.SubjectOperation, Standing: broken},
			args: escalation.Args{SandboxPermissions: p("workspace-write")}, wantErr: escalation.ErrPermissionsWithoutJustification.Error()},
		{name: "operation: no standing policy and no fields is the zero policy", open: escalation.Opening{Subject: escalation.SubjectOperation, Unconfined: notHere}},
		{name: "operation: no standing policy refuses any sandbox_permissions", open: escalation.Opening{Subject: escalation.SubjectOperation, Unconfined: notHere},
			args: both("read-only"), wantErr: "not here"},
		{name: "operation: the standing mode asked for goes to the approver's no-op", open: escalation.Opening{Subject: escalation.SubjectOperation, Standing: standing(sandbox.ReadOnly)},
			args: both("read-only"), wantMode: sandbox.ReadOnly, wantAsk: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := &askRecorder{err: tc.refuse}
			tc.open.Escalate = rec.ask
			call := pipeline.NewCall("c1", "tool", json.RawMessage(`{}`), nil, nil)
			pol, err := tc.open.Open(context.Background(), call, tc.args)
			if errText(err) != tc.wantErr || pol.Mode != tc.wantMode || len(rec.asked) != tc.wantAsk {
				t.Fatalf("Open = %+v, %q after %d questions; want mode %q, error %q, %d questions", pol, errText(err), len(rec.asked), tc.wantMode, tc.wantErr, tc.wantAsk)
			}
			if err == nil && tc.open.Standing != nil && (pol.WorkspaceRoot != ws || pol.SessionID != "s") {
				t.Errorf("the grant replaced more than the mode: %+v", pol)
			}
		})
	}
}

// TestOpenWithoutAnEscalatorRefusesLikeNewNil: the one fallback for a tool
// composed without an approval service.
func TestOpenWithoutAnEscalatorRefusesLikeNewNil(t *testing.T) {
	o := escalation.Opening{Subject: escalation.SubjectOperation, Standing: func(*pipeline.Call) (sandbox.Policy, error) {
		return sandbox.Policy{Mode: sandbox.ReadOnly}, nil
	}}
	call := pipeline.NewCall("c1", "write", json.RawMessage(`{}`), &pipeline.Agent{ID: "a"}, nil)
	_, err := o.Open(context.Background(), call, escalation.Args{SandboxPermissions: p("workspace-write"), Justification: p("needed")})
	_, want := escalation.New(nil)(context.Background(), call, escalation.Request{Requested: sandbox.WorkspaceWrite, Effective: sandbox.ReadOnly})
	if want == nil || errText(err) != errText(want) {
		t.Fatalf("Open without Escalate: %v; New(nil) says %v", err, want)
	}
}

func TestOpenCallDecodesTheCall(t *testing.T) {
	o := escalation.Opening{Subject: escalation.SubjectCommand, Escalate: (&askRecorder{}).ask, Standing: func(*pipeline.Call) (sandbox.Policy, error) {
		return sandbox.Policy{Mode: sandbox.ReadOnly}, nil
	}}
	tests := []struct{ args, wantMode, wantErr string }{
		{args: `{}`, wantMode: "read-only"},
		{args: `{"sandbox_permissions":"workspace-write","justification":"needed"}`, wantMode: "workspace-write"},
		{args: `{"sandbox_permissions":3,"justification":"needed"}`, wantErr: "invalid sandbox_permissions: expected a string"},
		{args: `[1]`, wantErr: "invalid arguments: "}, // then encoding/json's words
	}
	for _, tc := range tests {
		pol, err := o.OpenCall(context.Background(), pipeline.NewCall("c", "t", json.RawMessage(tc.args), nil, nil))
		got := errText(err)
		if tc.wantErr == "invalid arguments: " {
			got, _, _ = strings.Cut(got, ": json")
			got += ": "
		}
		if string(pol.Mode) != tc.wantMode || got != tc.wantErr {
			t.Errorf("OpenCall(%s) = %q, %q; want %q, %q", tc.args, pol.Mode, errText(err), tc.wantMode, tc.wantErr)
		}
	}
}
