package escalation

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/sandbox"
)

// DecodeArgs reads sandbox_permissions, then justification, from a call's
// argument object: absent or null is nil, a string is kept as sent
// (untrimmed), anything else is the error notString returns for that key
// and value (each tool words its argument errors its own way).
func DecodeArgs(obj map[string]json.RawMessage, notString func(key string, value json.RawMessage) error) (Args, error) {
	var a Args
	for _, f := range []struct {
		key string
		dst **string
	}{{"sandbox_permissions", &a.SandboxPermissions}, {"justification", &a.Justification}} {
		v, ok := obj[f.key]
		if !ok || string(v) == "null" {
			continue
		}
		var s string
		if json.Unmarshal(v, &s) != nil {
			return Args{}, notString(f.key, v)
		}
		*f.dst = &s
	}
	return a, nil
}

// --8<-- [start:opening]
// Opening is how one tool opens a call: which policy the call runs under,
// given the escalation arguments it carries. The bash tool, the file tools,
// the escalation sim and the tests all open calls through it.
type Opening struct {
	// Subject is what the model retries, and picks the rules: SubjectCommand
	// plans with [PlanCommand] (bash), SubjectOperation with [PlanOperation]
	// (file tools), which also checks the pairing before anything is resolved.
	Subject string
	// Standing resolves the call's standing policy; nil is the zero policy
	// (a tool that does not confine has none).
	Standing func(call *pipeline.Call) (sandbox.Policy, error)
	// Escalate asks the user (normally [New] of the approval service); nil
	// means no approval service is composed, and every widening is refused
	// exactly as New(nil) refuses it.
	Escalate Func
	// Unconfined, when set, is the tool's refusal of any widening: the tool
	// does not confine, so a wider mode would mean nothing.
	Unconfined error
}

// Open returns the policy the call runs under, in order: the standing policy;
// the plan of the escalation arguments a (a request for the standing mode, or
// none, runs under the standing policy with no prompt); the tool's own
// refusal when it does not confine; the question to the user; and the
// granted mode on the standing policy, for this one call (nothing is stored).
// Every refusal is a model-facing error, and nothing has run when Open
// returns one.
func (o Opening) Open(ctx context.Context, call *pipeline.Call, a Args) (sandbox.Policy, error) {
	plan := PlanCommand
	if o.Subject == SubjectOperation {
		if err := CheckPairing(a); err != nil {
			return sandbox.Policy{}, err
		}
		plan = PlanOperation
	}
	var standing sandbox.Policy
	if o.Standing != nil {
		var err error
		if standing, err = o.Standing(call); err != nil {
			return sandbox.Policy{}, err
		}
	}
	req, escalate, err := plan(a, standing.Mode)
	switch {
	case err != nil:
		return sandbox.Policy{}, err
	case !escalate:
		return standing, nil
	case o.Unconfined != nil:
		return sandbox.Policy{}, o.Unconfined
	}
	ask := o.Escalate
	if ask == nil {
		ask = New(nil)
	}
	granted, err := ask(ctx, call, req)
	if err != nil {
		return sandbox.Policy{}, err
	}
	standing.Mode = granted
	return standing, nil
}

// --8<-- [end:opening]

// OpenCall is Open with the escalation arguments decoded from the call's
// argument object by [DecodeArgs] ("invalid <key>: expected a string"), for
// a tool that has no other arguments to validate first (the escalation sim,
// the tests). A call whose arguments are not an object is refused.
func (o Opening) OpenCall(ctx context.Context, call *pipeline.Call) (sandbox.Policy, error) {
	var obj map[string]json.RawMessage
	if err := call.DecodeArgs(&obj); err != nil {
		return sandbox.Policy{}, fmt.Errorf("invalid arguments: %v", err)
	}
	a, err := DecodeArgs(obj, func(key string, _ json.RawMessage) error {
		return fmt.Errorf("invalid %s: expected a string", key)
	})
	if err != nil {
		return sandbox.Policy{}, err
	}
	return o.Open(ctx, call, a)
}
