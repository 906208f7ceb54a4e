package pipeline_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/dshsim/dshsim/pipeline"
)

const scopedReason = "this step is restricted to read-only tools"

// denyWrites is the scoped guard every monotonic case starts from.
func denyWrites(ctx context.Context, call *pipeline.Call) (string, bool) {
	if call.Name() == "write" {
		return scopedReason, true
	}
	return "", false
}

// grantAll is an approver that allows every ask once.
type grantAll struct{}

func (grantAll) Request(context.Context, pipeline.ApprovalRequest) (pipeline.ApprovalOutcome, error) {
	return pipeline.AllowedOnce, nil
}

func forceAllow(context.Context, *pipeline.Call, func() (pipeline.Decision, error)) (pipeline.Decision, error) {
	return pipeline.Allow(), nil
}

func askAlways(context.Context, *pipeline.Call, func() (pipeline.Decision, error)) (pipeline.Decision, error) {
	return pipeline.Ask("write needs a yes"), nil
}

func successWrapper(context.Context, *pipeline.Call, func(context.Context) (pipeline.Result, error)) (pipeline.Result, error) {
	return pipeline.Result{Content: []pipeline.Block{pipeline.TextBlock("wrapper says done")}}, nil
}

func acceptWithContent(ctx context.Context, call *pipeline.Call, res pipeline.Result, next func() (pipeline.PostDecision, error)) (pipeline.PostDecision, error) {
	return pipeline.PostDecision{Kind: pipeline.PostAccept, Content: []pipeline.Block{pipeline.TextBlock("written, all fine")}}, nil
}

// TestScopedDenyIsMonotonic: a deny from a guard registered for a scope (the
// agent's own, or the preset standing scope above it) cannot be undone from
// any side: not by a global or a nested (descendant-scope) registration, not
// by a pre-execute listener forcing allow (prepended after it), not by an
// approval answer, not by a wrapper, not by a post-execute listener, and not
// for a nested call. The body never runs and the reason stays the message.
func TestScopedDenyIsMonotonic(t *testing.T) {
	type undoer struct {
		name string
		// try registers the attempt to undo the deny; where names the scope
		// it registers through ("global", "preset", "a", "c").
		try func(t *testing.T, w *world, sc pipeline.Scoped)
		// text is the model-facing text when it is not "Error: <reason>".
		text string
	}
	reg := func(t *testing.T) func(func(), error) func() { return mustReg(t) }
	undoers := []undoer{
		{name: "nothing", try: func(*testing.T, *world, pipeline.Scoped) {}},
		{name: "prepended force-allow listener", try: func(t *testing.T, w *world, sc pipeline.Scoped) {
			reg(t)(sc.PrependPreExecute(forceAllow))
		}},
		{name: "appended force-allow listener", try: func(t *testing.T, w *world, sc pipeline.Scoped) {
			reg(t)(sc.OnPreExecute(forceAllow))
		}},
		{name: "abstaining guard registered later", try: func(t *testing.T, w *world, sc pipeline.Scoped) {
			reg(t)(sc.AddGuard(func(context.Context, *pipeline.Call) (string, bool) { return "", false }))
		}},
		{name: "ask answered allowed-once", try: func(t *testing.T, w *world, sc pipeline.Scoped) {
			w.r.SetApprover(grantAll{})
			reg(t)(sc.PrependPreExecute(askAlways))
		}},
		{name: "prepended wrapper returning success", try: func(t *testing.T, w *world, sc pipeline.Scoped) {
			reg(t)(sc.PrependExecute(successWrapper))
		}},
		{name: "post-execute accepting with new content", try: func(t *testing.T, w *world, sc pipeline.Scoped) {
			reg(t)(sc.PrependPostExecute(acceptWithContent))
		}, text: "written, all fine"},
		{name: "result observer", try: func(t *testing.T, w *world, sc pipeline.Scoped) {
			reg(t)(sc.OnResult(func(call *pipeline.Call, res pipeline.Result) { res.IsError, res.Error = false, nil }))
		}},
	}
	denyAt := []string{"a", "preset"}
	undoAt := []string{"global", "preset", "a", "c"}
	for _, d := range denyAt {
		for _, u := range undoers {
			for _, at := range undoAt {
				for _, caller := range []string{"a", "c"} {
					t.Run("deny@"+d+"/"+u.name+"@"+at+"/call-by-"+caller, func(t *testing.T) {
						w := newWorld(t)
						mustReg(t)(w.r.In(w.Scope(d)).AddGuard(denyWrites))
						if at == "c" && caller == "a" {
							t.Skip("a registration for c never reaches a's calls (TestScopedAdmission)")
						}
						u.try(t, w, w.r.In(w.Scope(at)))
						for _, nested := range []bool{false, true} {
							call := pipeline.NewCall("w1", "write", json.RawMessage(`{"path":"x"}`), w.Agent(caller), context.Background())
							if nested {
								outer := pipeline.NewCall("outer", "run_code", json.RawMessage(`{}`), w.Agent(caller), context.Background())
								call = pipeline.NewSubCall(outer, "outer:code:1", "write", json.RawMessage(`{"path":"x"}`), context.Background())
							}
							res := w.r.Execute(call)
							text := u.text
							if text == "" {
								text = "Error: " + scopedReason
							}
							if !res.IsError || res.Error == nil || res.Error.Message != scopedReason || res.Text() != text || res.Value != nil {
								t.Fatalf("nested=%v: result %+v; want a failure with message %q and text %q", nested, res, scopedReason, text)
							}
						}
						if w.ranList() != "" {
							t.Fatalf("the body ran: %s", w.ranList())
						}
						// The same guard leaves read alone: the deny is about write only.
						if res := w.call(w.Agent(caller), "read"); u.name == "nothing" && res.IsError {
							t.Fatalf("read was refused: %s", res.Text())
						}
					})
				}
			}
		}
	}
}

// TestScopedDenyBeatsLaterRegistrationsDuringTheCall: a listener that
// registers a force-allow listener and an abstaining guard while the call is
// in flight changes nothing for that call (lists are snapshotted per call).
func TestScopedDenyBeatsLaterRegistrationsDuringTheCall(t *testing.T) {
	w := newWorld(t)
	reg := mustReg(t)
	reg(w.r.In(w.A.Scope()).AddGuard(denyWrites))
	reg(w.r.In(nil).OnPreExecute(func(ctx context.Context, call *pipeline.Call, next func() (pipeline.Decision, error)) (pipeline.Decision, error) {
		reg(w.r.In(w.A.Scope()).PrependPreExecute(forceAllow))
		return next()
	}))
	for i := 0; i < 2; i++ {
		if res := w.call(w.A, "write"); res.Text() != "Error: "+scopedReason {
			t.Fatalf("call %d: %q", i, res.Text())
		}
	}
}

// TestThrowingScopedGuardFailsClosed: a panicking scoped guard denies the
// call as a final error (post-execute skipped).
func TestThrowingScopedGuardFailsClosed(t *testing.T) {
	w := newWorld(t)
	reg := mustReg(t)
	post := 0
	reg(w.r.In(nil).OnPostExecute(func(ctx context.Context, call *pipeline.Call, res pipeline.Result, next func() (pipeline.PostDecision, error)) (pipeline.PostDecision, error) {
		post++
		return next()
	}))
	reg(w.r.In(w.A.Scope()).AddGuard(func(context.Context, *pipeline.Call) (string, bool) { panic("guard exploded") }))
	res := w.call(w.A, "write")
	if res.Text() != "Error: guard exploded" || post != 0 || w.ranList() != "" {
		t.Fatalf("result %q, post runs %d, bodies %q", res.Text(), post, w.ranList())
	}
}
