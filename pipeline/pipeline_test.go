package pipeline_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dshsim/dshsim/internal/waittest"
	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/pipeline/session"
	"github.com/dshsim/dshsim/pipeline/session/sessiontest"
)

// state records what happened during one call.
type state struct {
	mu        sync.Mutex
	trace     []string
	bodyRuns  int
	postSaw   []pipeline.Result
	results   int
	approvals []pipeline.ApprovalRequest
	cancel    context.CancelFunc
	bodyCtx   context.Context
}

func (s *state) add(ev string) {
	s.mu.Lock()
	s.trace = append(s.trace, ev)
	s.mu.Unlock()
}

// fakeApprover is a constructed approval service returning a fixed outcome.
type fakeApprover struct {
	outcome pipeline.ApprovalOutcome
	err     error
	st      *state
	onAsk   func()
}

func (f *fakeApprover) Request(ctx context.Context, req pipeline.ApprovalRequest) (pipeline.ApprovalOutcome, error) {
	f.st.approvals = append(f.st.approvals, req)
	if f.onAsk != nil {
		f.onAsk()
	}
	return f.outcome, f.err
}

type hostile struct{}

func (hostile) String() string { panic("no printing") }

var testAgent = &pipeline.Agent{ID: "agent-1"}

// echo is a constructed tool returning its "text" argument.
func echo(st *state) pipeline.Tool {
	return pipeline.Tool{Name: "echo", Run: func(ctx context.Context, call *pipeline.Call) (pipeline.Output, error) {
		st.mu.Lock()
		st.bodyRuns++
		st.bodyCtx = ctx
		st.mu.Unlock()
		st.add("dispatch")
		var a struct{ Text string }
		if err := call.DecodeArgs(&a); err != nil {
			return pipeline.Output{}, err
		}
		v, _ := json.Marshal(a.Text)
		return pipeline.Output{Value: v, Content: []pipeline.Block{pipeline.TextBlock(a.Text)}, Meta: json.RawMessage(`{"len":` + fmt.Sprint(len(a.Text)) + `}`)}, nil
	}}
}

func newRegistry(t *testing.T, st *state) *pipeline.Registry {
	t.Helper()
	r := pipeline.NewRegistry(pipeline.WithLogf(func(string, ...any) {}))
	if _, err := r.Register(echo(st)); err != nil {
		t.Fatal(err)
	}
	r.OnPostExecute(func(ctx context.Context, call *pipeline.Call, res pipeline.Result, next func() (pipeline.PostDecision, error)) (pipeline.PostDecision, error) {
		st.mu.Lock()
		st.postSaw = append(st.postSaw, res)
		st.mu.Unlock()
		return next()
	})
	r.OnResult(func(call *pipeline.Call, res pipeline.Result) {
		st.mu.Lock()
		st.results++
		st.mu.Unlock()
	})
	return r
}

func pre(f func(ctx context.Context, call *pipeline.Call, next func() (pipeline.Decision, error)) (pipeline.Decision, error)) pipeline.PreExecute {
	return f
}

func TestPipelineStages(t *testing.T) {
	type want struct {
		text     string // model-facing text
		isError  bool
		code     string // error.info.code, "" = no info
		bodyRuns int
		postRuns int
		trace    string
	}
	tests := []struct {
		name  string
		setup func(t *testing.T, r *pipeline.Registry, st *state)
		call  func(st *state, ctx context.Context) *pipeline.Call
		want  want
	}{
		{
			name:  "allowed call returns the body's result and observers see it once",
			setup: func(*testing.T, *pipeline.Registry, *state) {},
			want:  want{text: "hi", bodyRuns: 1, postRuns: 1},
		},
		{
			name:  "unknown tool fails at dispatch with UNKNOWN_TOOL after policy saw it",
			setup: func(t *testing.T, r *pipeline.Registry, st *state) { addTrace(r, st) },
			call: func(st *state, ctx context.Context) *pipeline.Call {
				return pipeline.NewCall("c1", "nope", json.RawMessage(`{}`), testAgent, ctx)
			},
			want: want{text: `Error: unknown tool "nope"`, isError: true, code: "UNKNOWN_TOOL", postRuns: 1, trace: "pre,execute:before,execute:after,post"},
		},
		{
			name: "body error renders its message without info",
			setup: body(func() (pipeline.Output, error) {
				return pipeline.Output{}, errors.New("exploded")
			}),
			want: want{text: "Error: exploded", isError: true, bodyRuns: 1, postRuns: 1},
		},
		{
			name: "body coded error keeps name and code",
			setup: body(func() (pipeline.Output, error) {
				return pipeline.Output{}, pipeline.NewError("FsError", "FS_NOT_FOUND", "gone")
			}),
			want: want{text: "Error: gone", isError: true, code: "FS_NOT_FOUND", bodyRuns: 1, postRuns: 1},
		},
		{
			name: "body panicking with an unprintable value renders <unprintable thrown value>",
			setup: body(func() (pipeline.Output, error) {
				panic(hostile{})
			}),
			want: want{text: "Error: <unprintable thrown value>", isError: true, bodyRuns: 1, postRuns: 1},
		},
		{
			name: "body returning lossy value is INVALID_TOOL_OUTPUT",
			setup: body(func() (pipeline.Output, error) {
				return pipeline.Output{Value: json.RawMessage(`{nope`)}, nil
			}),
			want: want{text: `Error: tool "echo" returned invalid output: value is not lossless JSON`, isError: true, code: "INVALID_TOOL_OUTPUT", bodyRuns: 1, postRuns: 1},
		},
		{
			name: "pre deny renders the reason and post sees the denial",
			setup: func(t *testing.T, r *pipeline.Registry, st *state) {
				r.OnPreExecute(pre(func(context.Context, *pipeline.Call, func() (pipeline.Decision, error)) (pipeline.Decision, error) {
					return pipeline.Deny("denied by policy"), nil
				}))
				addTrace(r, st)
			},
			want: want{text: "Error: denied by policy", isError: true, postRuns: 1, trace: "pre,post"},
		},
		{
			name:  "deny with an empty reason still denies",
			setup: decides(pipeline.Deny("")),
			want:  want{text: "Error: ", isError: true, postRuns: 1},
		},
		{
			name: "deny info becomes error.info",
			setup: func(t *testing.T, r *pipeline.Registry, st *state) {
				r.OnPreExecute(pre(func(context.Context, *pipeline.Call, func() (pipeline.Decision, error)) (pipeline.Decision, error) {
					d := pipeline.Deny("no")
					d.Info = &pipeline.ErrorInfo{Name: "PolicyError", Code: "POLICY_DENIED"}
					return d, nil
				}))
			},
			want: want{text: "Error: no", isError: true, code: "POLICY_DENIED", postRuns: 1},
		},
		{
			name: "cancel decision is ABORTED_BEFORE_DISPATCH, skips guards, still passes post",
			setup: func(t *testing.T, r *pipeline.Registry, st *state) {
				r.OnPreExecute(pre(func(context.Context, *pipeline.Call, func() (pipeline.Decision, error)) (pipeline.Decision, error) {
					return pipeline.Cancel(), nil
				}))
				r.AddGuard(func(context.Context, *pipeline.Call) (string, bool) { st.add("guard"); return "", false })
			},
			want: want{text: "Error: tool call aborted before dispatch", isError: true, code: "ABORTED_BEFORE_DISPATCH", postRuns: 1},
		},
		{
			name: "unknown decision kind is an error, never an implicit allow",
			setup: func(t *testing.T, r *pipeline.Registry, st *state) {
				r.OnPreExecute(pre(func(context.Context, *pipeline.Call, func() (pipeline.Decision, error)) (pipeline.Decision, error) {
					return pipeline.Decision{Kind: "rewrite"}, nil
				}))
			},
			want: want{text: `Error: tools/pre-execute returned an unknown decision kind "rewrite"; only allow, deny, cancel and ask exist`, isError: true},
		},
		{
			name: "zero decision (no kind) is an error",
			setup: func(t *testing.T, r *pipeline.Registry, st *state) {
				r.OnPreExecute(pre(func(context.Context, *pipeline.Call, func() (pipeline.Decision, error)) (pipeline.Decision, error) {
					return pipeline.Decision{}, nil
				}))
			},
			want: want{text: `Error: tools/pre-execute returned an unknown decision kind ""; only allow, deny, cancel and ask exist`, isError: true},
		},
		{
			name: "listener returning changed arguments fails the call",
			setup: func(t *testing.T, r *pipeline.Registry, st *state) {
				r.OnPreExecute(pre(func(ctx context.Context, call *pipeline.Call, next func() (pipeline.Decision, error)) (pipeline.Decision, error) {
					d, err := next()
					d.Args = json.RawMessage(`{"text":"changed"}`)
					return d, err
				}))
			},
			want: want{text: "Error: " + pipeline.ErrArgsFrozen.Error(), isError: true},
		},
		{
			name: "listener returning the same arguments is allowed",
			setup: func(t *testing.T, r *pipeline.Registry, st *state) {
				r.OnPreExecute(pre(func(ctx context.Context, call *pipeline.Call, next func() (pipeline.Decision, error)) (pipeline.Decision, error) {
					d, err := next()
					d.Args = call.Args()
					return d, err
				}))
			},
			want: want{text: "hi", bodyRuns: 1, postRuns: 1},
		},
		{
			name: "an allow carrying the same arguments still meets the guards",
			setup: func(t *testing.T, r *pipeline.Registry, st *state) {
				r.OnPreExecute(pre(func(ctx context.Context, call *pipeline.Call, next func() (pipeline.Decision, error)) (pipeline.Decision, error) {
					d := pipeline.Allow()
					d.Args = call.Args()
					return d, nil
				}))
				r.AddGuard(func(context.Context, *pipeline.Call) (string, bool) {
					st.add("guard")
					return "vetoed by the guard", true
				})
			},
			want: want{text: "Error: vetoed by the guard", isError: true, postRuns: 1, trace: "guard"},
		},
		{
			name: "listener mutating its argument copy does not change what runs",
			setup: func(t *testing.T, r *pipeline.Registry, st *state) {
				r.OnPreExecute(pre(func(ctx context.Context, call *pipeline.Call, next func() (pipeline.Decision, error)) (pipeline.Decision, error) {
					a := call.Args()
					copy(a, `{"text":"XX"}`)
					return next()
				}))
			},
			want: want{text: "hi", bodyRuns: 1, postRuns: 1},
		},
		{
			name: "outer listener without next overrides an inner deny",
			setup: func(t *testing.T, r *pipeline.Registry, st *state) {
				r.OnPreExecute(pre(func(context.Context, *pipeline.Call, func() (pipeline.Decision, error)) (pipeline.Decision, error) {
					st.add("inner")
					return pipeline.Deny("inner says no"), nil
				}))
				r.PrependPreExecute(pre(func(context.Context, *pipeline.Call, func() (pipeline.Decision, error)) (pipeline.Decision, error) {
					st.add("outer")
					return pipeline.Allow(), nil
				}))
			},
			want: want{text: "hi", bodyRuns: 1, postRuns: 1, trace: "outer,dispatch"},
		},
		{
			name: "guard denies even when a prepended listener forces allow",
			setup: func(t *testing.T, r *pipeline.Registry, st *state) {
				r.AddGuard(func(context.Context, *pipeline.Call) (string, bool) { return "guard says no", true })
				r.PrependPreExecute(pre(func(context.Context, *pipeline.Call, func() (pipeline.Decision, error)) (pipeline.Decision, error) {
					return pipeline.Allow(), nil
				}))
			},
			want: want{text: "Error: guard says no", isError: true, postRuns: 1},
		},
		{
			name: "guards: abstain then deny is denied, later guards not run",
			setup: func(t *testing.T, r *pipeline.Registry, st *state) {
				r.AddGuard(func(context.Context, *pipeline.Call) (string, bool) { st.add("g1"); return "", false })
				r.AddGuard(func(context.Context, *pipeline.Call) (string, bool) { st.add("g2"); return "second", true })
				r.AddGuard(func(context.Context, *pipeline.Call) (string, bool) { st.add("g3"); return "third", true })
			},
			want: want{text: "Error: second", isError: true, postRuns: 1, trace: "g1,g2"},
		},
		{
			name: "guards are not run for a denied call",
			setup: func(t *testing.T, r *pipeline.Registry, st *state) {
				r.OnPreExecute(pre(func(context.Context, *pipeline.Call, func() (pipeline.Decision, error)) (pipeline.Decision, error) {
					return pipeline.Deny("pre no"), nil
				}))
				r.AddGuard(func(context.Context, *pipeline.Call) (string, bool) { st.add("guard"); return "", false })
			},
			want: want{text: "Error: pre no", isError: true, postRuns: 1},
		},
		{
			name: "panicking guard fails the call without running the body or post",
			setup: func(t *testing.T, r *pipeline.Registry, st *state) {
				r.AddGuard(func(context.Context, *pipeline.Call) (string, bool) { panic("guard broke") })
			},
			want: want{text: "Error: guard broke", isError: true},
		},
		{
			name: "pre listener error is the exact final error and skips post",
			setup: func(t *testing.T, r *pipeline.Registry, st *state) {
				r.OnPreExecute(pre(func(context.Context, *pipeline.Call, func() (pipeline.Decision, error)) (pipeline.Decision, error) {
					return pipeline.Decision{}, errors.New("pre exploded")
				}))
			},
			want: want{text: "Error: pre exploded", isError: true},
		},
		{
			name: "pre listener coded error keeps info",
			setup: func(t *testing.T, r *pipeline.Registry, st *state) {
				r.OnPreExecute(pre(func(context.Context, *pipeline.Call, func() (pipeline.Decision, error)) (pipeline.Decision, error) {
					return pipeline.Decision{}, pipeline.NewError("X", "X_CODE", "coded")
				}))
			},
			want: want{text: "Error: coded", isError: true, code: "X_CODE"},
		},
		{
			name: "panicking pre listener never lets the call through",
			setup: func(t *testing.T, r *pipeline.Registry, st *state) {
				r.OnPreExecute(pre(func(context.Context, *pipeline.Call, func() (pipeline.Decision, error)) (pipeline.Decision, error) {
					panic(errors.New("listener panic"))
				}))
			},
			want: want{text: "Error: listener panic", isError: true},
		},
		{
			name:  "ask without approval service denies with the ask reason",
			setup: decides(pipeline.Ask("needs approval")),
			want:  want{text: "Error: needs approval", isError: true, postRuns: 1},
		},
		{
			name:  "ask without reason and without approval service",
			setup: askWith(nil),
			want:  want{text: `Error: tool "echo" requires approval (not yet supported)`, isError: true, postRuns: 1},
		},
		{
			name:  "ask allowed-once runs the body",
			setup: askWith(&fakeApprover{outcome: pipeline.AllowedOnce}),
			want:  want{text: "hi", bodyRuns: 1, postRuns: 1},
		},
		{
			name:  "ask rejected",
			setup: askWith(&fakeApprover{outcome: pipeline.Rejected}),
			want:  want{text: `Error: the user rejected tool "echo"`, isError: true, postRuns: 1},
		},
		{
			name:  "ask cancelled while the caller is not",
			setup: askWith(&fakeApprover{outcome: pipeline.Cancelled}),
			want:  want{text: `Error: approval for tool "echo" was cancelled`, isError: true, postRuns: 1},
		},
		{
			name:  "ask unavailable",
			setup: askWith(&fakeApprover{outcome: pipeline.Unavailable}),
			want:  want{text: `Error: tool "echo" requires approval, but no approval channel is available`, isError: true, postRuns: 1},
		},
		{
			name:  "ask from a rogue service outcome is an unreachable-variant error",
			setup: askWith(&fakeApprover{outcome: "maybe"}),
			want:  want{text: `Error: unreachable variant in ApprovalOutcome: "maybe"`, isError: true},
		},
		{
			name:  "ask when the approval service errors fails the call",
			setup: askWith(&fakeApprover{err: errors.New("approval.request() outside an open turn: x")}),
			want:  want{text: "Error: approval.request() outside an open turn: x", isError: true},
		},
		{
			name:  "agentless ask is not asked",
			setup: askWith(&fakeApprover{outcome: pipeline.AllowedOnce}),
			call: func(st *state, ctx context.Context) *pipeline.Call {
				return pipeline.NewCall("c1", "echo", json.RawMessage(`{"text":"hi"}`), nil, ctx)
			},
			want: want{text: `Error: tool "echo" requires approval, but the call has no agent to route it through`, isError: true, postRuns: 1},
		},
		{
			name: "ask allowed-once still faces the guards",
			setup: func(t *testing.T, r *pipeline.Registry, st *state) {
				askWith(&fakeApprover{outcome: pipeline.AllowedOnce})(t, r, st)
				r.AddGuard(func(context.Context, *pipeline.Call) (string, bool) { return "guard veto", true })
			},
			want: want{text: "Error: guard veto", isError: true, postRuns: 1},
		},
		{
			name: "caller abort during approval is ABORTED_BEFORE_DISPATCH",
			setup: func(t *testing.T, r *pipeline.Registry, st *state) {
				askWith(&fakeApprover{outcome: pipeline.Cancelled, onAsk: func() { st.cancel() }})(t, r, st)
			},
			want: want{text: "Error: tool call aborted before dispatch", isError: true, code: "ABORTED_BEFORE_DISPATCH", postRuns: 1},
		},
		{
			name: "post accept replaces content",
			setup: func(t *testing.T, r *pipeline.Registry, st *state) {
				r.OnPostExecute(func(ctx context.Context, call *pipeline.Call, res pipeline.Result, next func() (pipeline.PostDecision, error)) (pipeline.PostDecision, error) {
					return pipeline.PostDecision{Kind: pipeline.PostAccept, Content: []pipeline.Block{pipeline.TextBlock("replaced")}}, nil
				})
			},
			want: want{text: "replaced", bodyRuns: 1, postRuns: 1},
		},
		{
			name: "post block with feedback",
			setup: func(t *testing.T, r *pipeline.Registry, st *state) {
				r.OnPostExecute(func(ctx context.Context, call *pipeline.Call, res pipeline.Result, next func() (pipeline.PostDecision, error)) (pipeline.PostDecision, error) {
					return pipeline.PostDecision{Kind: pipeline.PostBlock, Feedback: []pipeline.Block{pipeline.TextBlock("blocked: too long")}}, nil
				})
			},
			want: want{text: "blocked: too long", isError: true, bodyRuns: 1, postRuns: 1},
		},
		{
			name: "post error is the exact final error",
			setup: func(t *testing.T, r *pipeline.Registry, st *state) {
				r.OnPostExecute(func(ctx context.Context, call *pipeline.Call, res pipeline.Result, next func() (pipeline.PostDecision, error)) (pipeline.PostDecision, error) {
					return pipeline.PostDecision{}, errors.New("post exploded")
				})
			},
			want: want{text: "Error: post exploded", isError: true, bodyRuns: 1, postRuns: 1},
		},
		{
			name: "stage order is pre, execute:before, dispatch, execute:after, post",
			setup: func(t *testing.T, r *pipeline.Registry, st *state) {
				addTrace(r, st)
			},
			want: want{text: "hi", bodyRuns: 1, postRuns: 1, trace: "pre,execute:before,dispatch,execute:after,post"},
		},
		{
			name: "deny skips tools/execute",
			setup: func(t *testing.T, r *pipeline.Registry, st *state) {
				addTrace(r, st)
				r.OnPreExecute(pre(func(context.Context, *pipeline.Call, func() (pipeline.Decision, error)) (pipeline.Decision, error) {
					return pipeline.Deny("no"), nil
				}))
			},
			want: want{text: "Error: no", isError: true, postRuns: 1, trace: "pre,post"},
		},
		{
			name: "wrapper short-circuit skips the body",
			setup: func(t *testing.T, r *pipeline.Registry, st *state) {
				r.OnExecute(func(ctx context.Context, call *pipeline.Call, next func(context.Context) (pipeline.Result, error)) (pipeline.Result, error) {
					return pipeline.Result{Value: json.RawMessage(`"cached"`), Content: []pipeline.Block{pipeline.TextBlock("cached")}}, nil
				})
			},
			want: want{text: "cached", postRuns: 1},
		},
		{
			name: "wrapper error is the exact final error",
			setup: func(t *testing.T, r *pipeline.Registry, st *state) {
				r.OnExecute(func(ctx context.Context, call *pipeline.Call, next func(context.Context) (pipeline.Result, error)) (pipeline.Result, error) {
					return pipeline.Result{}, errors.New("wrapper exploded")
				})
			},
			want: want{text: "Error: wrapper exploded", isError: true},
		},
		{
			name: "wrapper sees the body's coded error",
			setup: func(t *testing.T, r *pipeline.Registry, st *state) {
				r.Unregister("echo")
				r.Register(pipeline.Tool{Name: "echo", Run: func(context.Context, *pipeline.Call) (pipeline.Output, error) {
					st.bodyRuns++
					return pipeline.Output{}, pipeline.NewError("E", "E_CODE", "bad")
				}})
				r.OnExecute(func(ctx context.Context, call *pipeline.Call, next func(context.Context) (pipeline.Result, error)) (pipeline.Result, error) {
					res, err := next(ctx)
					if res.Error == nil || res.Error.Info == nil || res.Error.Info.Code != "E_CODE" {
						return pipeline.Result{}, errors.New("wrapper did not see the coded error")
					}
					return res, err
				})
			},
			want: want{text: "Error: bad", isError: true, code: "E_CODE", bodyRuns: 1, postRuns: 1},
		},
		{
			name: "abort while pre awaits is ABORTED_BEFORE_DISPATCH and the body never runs",
			setup: func(t *testing.T, r *pipeline.Registry, st *state) {
				r.OnPreExecute(pre(func(ctx context.Context, call *pipeline.Call, next func() (pipeline.Decision, error)) (pipeline.Decision, error) {
					st.cancel()
					return next()
				}))
			},
			want: want{text: "Error: tool call aborted before dispatch", isError: true, code: "ABORTED_BEFORE_DISPATCH", postRuns: 1},
		},
		{
			name: "deny settling after abort keeps the denial",
			setup: func(t *testing.T, r *pipeline.Registry, st *state) {
				r.OnPreExecute(pre(func(context.Context, *pipeline.Call, func() (pipeline.Decision, error)) (pipeline.Decision, error) {
					st.cancel()
					return pipeline.Deny("late deny"), nil
				}))
			},
			want: want{text: "Error: late deny", isError: true, postRuns: 1},
		},
		{
			name: "pre error settling after abort keeps the error",
			setup: func(t *testing.T, r *pipeline.Registry, st *state) {
				r.OnPreExecute(pre(func(context.Context, *pipeline.Call, func() (pipeline.Decision, error)) (pipeline.Decision, error) {
					st.cancel()
					return pipeline.Decision{}, errors.New("late error")
				}))
			},
			want: want{text: "Error: late error", isError: true},
		},
		{
			name: "abort while a wrapper awaits before next is ABORTED_BEFORE_DISPATCH",
			setup: func(t *testing.T, r *pipeline.Registry, st *state) {
				r.OnExecute(func(ctx context.Context, call *pipeline.Call, next func(context.Context) (pipeline.Result, error)) (pipeline.Result, error) {
					st.cancel()
					return next(ctx)
				})
			},
			want: want{text: "Error: tool call aborted before dispatch", isError: true, code: "ABORTED_BEFORE_DISPATCH", postRuns: 1},
		},
		{
			name: "wrapper supplying a cancelled context: body never runs",
			setup: func(t *testing.T, r *pipeline.Registry, st *state) {
				r.OnExecute(func(ctx context.Context, call *pipeline.Call, next func(context.Context) (pipeline.Result, error)) (pipeline.Result, error) {
					c, cancel := context.WithCancel(context.Background())
					cancel()
					return next(c)
				})
			},
			want: want{text: "Error: tool call aborted before dispatch", isError: true, code: "ABORTED_BEFORE_DISPATCH", postRuns: 1},
		},
		{
			name: "abort after body success during a wrapper is ABORTED",
			setup: func(t *testing.T, r *pipeline.Registry, st *state) {
				r.OnExecute(func(ctx context.Context, call *pipeline.Call, next func(context.Context) (pipeline.Result, error)) (pipeline.Result, error) {
					res, err := next(ctx)
					st.cancel()
					res.ContextMessages = append(res.ContextMessages, pipeline.ContextMessage{Plugin: "wrapper", Texts: []string{"wrapper ctx"}})
					return res, err
				})
			},
			want: want{text: "Error: tool call aborted", isError: true, code: "ABORTED", bodyRuns: 1, postRuns: 1},
		},
		{
			name: "abort during post turns a success into ABORTED",
			setup: func(t *testing.T, r *pipeline.Registry, st *state) {
				r.PrependPostExecute(func(ctx context.Context, call *pipeline.Call, res pipeline.Result, next func() (pipeline.PostDecision, error)) (pipeline.PostDecision, error) {
					st.cancel()
					return next()
				})
			},
			want: want{text: "Error: tool call aborted", isError: true, code: "ABORTED", bodyRuns: 1, postRuns: 1},
		},
		{
			name: "wrapper coded error after abort is kept",
			setup: func(t *testing.T, r *pipeline.Registry, st *state) {
				r.OnExecute(func(ctx context.Context, call *pipeline.Call, next func(context.Context) (pipeline.Result, error)) (pipeline.Result, error) {
					st.cancel()
					return pipeline.ErrorResult(pipeline.NewError("W", "W_CODE", "wrapper failure")), nil
				})
			},
			want: want{text: "Error: wrapper failure", isError: true, code: "W_CODE", postRuns: 1},
		},
		{
			name: "body's own error on abort is kept",
			setup: func(t *testing.T, r *pipeline.Registry, st *state) {
				r.Unregister("echo")
				r.Register(pipeline.Tool{Name: "echo", Run: func(ctx context.Context, call *pipeline.Call) (pipeline.Output, error) {
					st.bodyRuns++
					st.cancel()
					return pipeline.Output{}, errors.New("body saw abort")
				}})
			},
			want: want{text: "Error: body saw abort", isError: true, bodyRuns: 1, postRuns: 1},
		},
		{
			name: "timeout wrapper fires with the VERBATIM text and TOOL_TIMEOUT",
			setup: func(t *testing.T, r *pipeline.Registry, st *state) {
				r.Unregister("echo")
				r.Register(pipeline.Tool{Name: "echo", Run: func(ctx context.Context, call *pipeline.Call) (pipeline.Output, error) {
					st.mu.Lock()
					st.bodyRuns++
					st.mu.Unlock()
					<-ctx.Done()
					return pipeline.Output{}, ctx.Err()
				}})
				r.OnExecute(pipeline.Timeout(20 * time.Millisecond))
			},
			want: want{text: "Error: tool call timed out after 20ms", isError: true, code: "TOOL_TIMEOUT", bodyRuns: 1, postRuns: 1},
		},
		{
			name: "retry wrapper runs the body again after a failure",
			setup: func(t *testing.T, r *pipeline.Registry, st *state) {
				r.Unregister("echo")
				r.Register(pipeline.Tool{Name: "echo", Run: func(ctx context.Context, call *pipeline.Call) (pipeline.Output, error) {
					st.bodyRuns++
					if st.bodyRuns < 3 {
						return pipeline.Output{}, errors.New("flaky")
					}
					return pipeline.Output{Content: []pipeline.Block{pipeline.TextBlock("third time")}}, nil
				}})
				r.OnExecute(pipeline.Retry(3, nil))
			},
			want: want{text: "third time", bodyRuns: 3, postRuns: 1},
		},
		{
			name: "post decision of an unknown kind fails the call",
			setup: func(t *testing.T, r *pipeline.Registry, st *state) {
				r.OnPostExecute(func(ctx context.Context, call *pipeline.Call, res pipeline.Result, next func() (pipeline.PostDecision, error)) (pipeline.PostDecision, error) {
					return pipeline.PostDecision{Kind: "rewrite"}, nil
				})
			},
			want: want{text: `Error: tools/post-execute returned an unknown decision kind "rewrite"; only accept and block exist`, isError: true, bodyRuns: 1, postRuns: 1},
		},
		{
			name: "panicking post listener fails the call",
			setup: func(t *testing.T, r *pipeline.Registry, st *state) {
				r.OnPostExecute(func(ctx context.Context, call *pipeline.Call, res pipeline.Result, next func() (pipeline.PostDecision, error)) (pipeline.PostDecision, error) {
					panic("post listener broke")
				})
			},
			want: want{text: "Error: post listener broke", isError: true, bodyRuns: 1, postRuns: 1},
		},
		{
			name: "abort during post after a wrapper short-circuit is ABORTED_BEFORE_DISPATCH",
			setup: func(t *testing.T, r *pipeline.Registry, st *state) {
				r.OnExecute(func(ctx context.Context, call *pipeline.Call, next func(context.Context) (pipeline.Result, error)) (pipeline.Result, error) {
					return pipeline.Result{Content: []pipeline.Block{pipeline.TextBlock("cached")}, ContextMessages: []pipeline.ContextMessage{{Plugin: "cache", Texts: []string{"from cache"}}}}, nil
				})
				r.PrependPostExecute(func(ctx context.Context, call *pipeline.Call, res pipeline.Result, next func() (pipeline.PostDecision, error)) (pipeline.PostDecision, error) {
					st.cancel()
					return next()
				})
			},
			want: want{text: "Error: tool call aborted before dispatch", isError: true, code: "ABORTED_BEFORE_DISPATCH", postRuns: 1},
		},
		{
			name: "malformed wrapper failure without error is rejected",
			setup: func(t *testing.T, r *pipeline.Registry, st *state) {
				r.OnExecute(func(ctx context.Context, call *pipeline.Call, next func(context.Context) (pipeline.Result, error)) (pipeline.Result, error) {
					return pipeline.Result{IsError: true, Content: []pipeline.Block{pipeline.TextBlock("half a failure")}}, nil
				})
			},
			want: want{text: "Error: tools/execute returned a malformed failure (a failure needs error and never has value or concludesTurn)", isError: true},
		},
		{
			name: "panicking result observer is contained",
			setup: func(t *testing.T, r *pipeline.Registry, st *state) {
				r.OnResult(func(*pipeline.Call, pipeline.Result) { panic("observer broke") })
			},
			want: want{text: "hi", bodyRuns: 1, postRuns: 1},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st := &state{}
			r := newRegistry(t, st)
			tc.setup(t, r, st)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			st.cancel = cancel
			var call *pipeline.Call
			if tc.call != nil {
				call = tc.call(st, ctx)
			} else {
				call = pipeline.NewCall("c1", "echo", json.RawMessage(`{"text":"hi"}`), testAgent, ctx)
			}
			res := waittest.Call(t, "the call to return", func() pipeline.Result { return r.Execute(call) })
			if got := res.Text(); got != tc.want.text {
				t.Errorf("text = %q, want %q", got, tc.want.text)
			}
			if res.IsError != tc.want.isError {
				t.Errorf("isError = %v, want %v", res.IsError, tc.want.isError)
			}
			var code string
			if res.Error != nil && res.Error.Info != nil {
				code = res.Error.Info.Code
			}
			if code != tc.want.code {
				t.Errorf("info code = %q, want %q", code, tc.want.code)
			}
			if res.IsError && (res.Value != nil || res.Error == nil) {
				t.Errorf("failure must have error and no value: %+v", res)
			}
			st.mu.Lock()
			defer st.mu.Unlock()
			if st.bodyRuns != tc.want.bodyRuns {
				t.Errorf("body ran %d times, want %d", st.bodyRuns, tc.want.bodyRuns)
			}
			if len(st.postSaw) != tc.want.postRuns {
				t.Errorf("post ran %d times, want %d", len(st.postSaw), tc.want.postRuns)
			}
			if st.results != 1 {
				t.Errorf("tools/result notified %d times, want exactly 1", st.results)
			}
			if tc.want.trace != "" {
				if got := strings.Join(st.trace, ","); got != tc.want.trace {
					t.Errorf("trace = %s, want %s", got, tc.want.trace)
				}
			}
		})
	}
}

// askWith registers a listener that asks (no reason) and mounts approver a.
// body replaces the echo tool's body with one that counts its runs and
// returns what fn returns (or panics as fn does).
func body(fn func() (pipeline.Output, error)) func(t *testing.T, r *pipeline.Registry, st *state) {
	return func(t *testing.T, r *pipeline.Registry, st *state) {
		r.Unregister("echo")
		r.Register(pipeline.Tool{Name: "echo", Run: func(context.Context, *pipeline.Call) (pipeline.Output, error) {
			st.bodyRuns++
			return fn()
		}})
	}
}

// decides registers one pre-execute listener that returns d.
func decides(d pipeline.Decision) func(t *testing.T, r *pipeline.Registry, st *state) {
	return func(t *testing.T, r *pipeline.Registry, st *state) {
		r.OnPreExecute(pre(func(context.Context, *pipeline.Call, func() (pipeline.Decision, error)) (pipeline.Decision, error) {
			return d, nil
		}))
	}
}

func askWith(a *fakeApprover) func(t *testing.T, r *pipeline.Registry, st *state) {
	return func(t *testing.T, r *pipeline.Registry, st *state) {
		if a != nil {
			a.st = st
			r.SetApprover(a)
		}
		r.OnPreExecute(pre(func(context.Context, *pipeline.Call, func() (pipeline.Decision, error)) (pipeline.Decision, error) {
			return pipeline.Ask(""), nil
		}))
	}
}

func addTrace(r *pipeline.Registry, st *state) {
	r.PrependPreExecute(pre(func(ctx context.Context, call *pipeline.Call, next func() (pipeline.Decision, error)) (pipeline.Decision, error) {
		st.add("pre")
		return next()
	}))
	r.OnExecute(func(ctx context.Context, call *pipeline.Call, next func(context.Context) (pipeline.Result, error)) (pipeline.Result, error) {
		st.add("execute:before")
		res, err := next(ctx)
		st.add("execute:after")
		return res, err
	})
	r.OnPostExecute(func(ctx context.Context, call *pipeline.Call, res pipeline.Result, next func() (pipeline.PostDecision, error)) (pipeline.PostDecision, error) {
		st.add("post")
		return next()
	})
}

func TestPreAbortedCallRunsNoStage(t *testing.T) {
	st := &state{}
	r := newRegistry(t, st)
	addTrace(r, st)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res := r.Execute(pipeline.NewCall("c1", "echo", json.RawMessage(`{"text":"hi"}`), testAgent, ctx))
	if res.Text() != "Error: tool call aborted before dispatch" || res.Error.Info.Code != "ABORTED_BEFORE_DISPATCH" {
		t.Errorf("result %+v", res)
	}
	if len(st.trace) != 0 || st.bodyRuns != 0 || len(st.postSaw) != 0 || st.results != 1 {
		t.Errorf("stages ran: trace %v body %d post %d results %d", st.trace, st.bodyRuns, len(st.postSaw), st.results)
	}
}

func TestInvalidArgumentsBeatPreAbort(t *testing.T) {
	st := &state{}
	r := newRegistry(t, st)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res := r.Execute(pipeline.NewCall("c1", "echo", json.RawMessage(`{"text":`), testAgent, ctx))
	if res.Text() != "Error: tool execution arguments must be losslessly JSON-serializable" || res.Error.Info != nil {
		t.Errorf("result %+v", res)
	}
	if st.results != 1 || len(st.postSaw) != 0 {
		t.Errorf("results %d post %d", st.results, len(st.postSaw))
	}
}

func TestBodyContextFusesCallerCancellation(t *testing.T) {
	st := &state{}
	r := pipeline.NewRegistry()
	started := make(chan struct{})
	r.Register(pipeline.Tool{Name: "wait", Run: func(ctx context.Context, call *pipeline.Call) (pipeline.Output, error) {
		st.bodyRuns++
		close(started)
		<-ctx.Done()
		return pipeline.Output{Content: []pipeline.Block{pipeline.TextBlock("late success")}}, nil
	}})
	var replacement context.Context
	r.OnExecute(func(ctx context.Context, call *pipeline.Call, next func(context.Context) (pipeline.Result, error)) (pipeline.Result, error) {
		replacement = context.WithoutCancel(ctx) // tries to detach the caller's cancellation
		return next(replacement)
	})
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-started; cancel() }()
	res := waittest.Call(t, "the cancelled call to return", func() pipeline.Result {
		return r.Execute(pipeline.NewCall("c1", "wait", json.RawMessage(`{}`), nil, ctx))
	})
	if res.Text() != "Error: tool call aborted" || res.Error.Info.Code != "ABORTED" {
		t.Errorf("result %+v", res)
	}
	if replacement.Err() != nil {
		t.Error("the wrapper's replacement context must not be cancelled by the registry")
	}
}

func TestPostSeesCopies(t *testing.T) {
	st := &state{}
	r := newRegistry(t, st)
	r.PrependPostExecute(func(ctx context.Context, call *pipeline.Call, res pipeline.Result, next func() (pipeline.PostDecision, error)) (pipeline.PostDecision, error) {
		res.Content[0].Text = "mutated"
		res.Value[1] = 'X'
		return next()
	})
	res := r.Execute(pipeline.NewCall("c1", "echo", json.RawMessage(`{"text":"hi"}`), testAgent, nil))
	if res.Text() != "hi" || string(res.Value) != `"hi"` {
		t.Errorf("a post listener changed the result: %+v", res)
	}
}

func TestRegistry(t *testing.T) {
	st := &state{}
	r := pipeline.NewRegistry()
	unregister, err := r.Register(echo(st))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		run  func() error
		want string
	}{
		{name: "duplicate name is an error", run: func() error { _, err := r.Register(echo(st)); return err }, want: `pipeline: tool "echo" is already registered`},
		{name: "empty name is an error", run: func() error { _, err := r.Register(pipeline.Tool{Run: echo(st).Run}); return err }, want: "pipeline: tool registration needs a name"},
		{name: "nil body is an error", run: func() error { _, err := r.Register(pipeline.Tool{Name: "x"}); return err }, want: `pipeline: tool "x" has no body (Run is nil)`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.run(); err == nil || err.Error() != tc.want {
				t.Errorf("err = %v, want %q", err, tc.want)
			}
		})
	}
	if _, ok := r.Lookup("echo"); !ok || len(r.Tools()) != 1 {
		t.Fatal("lookup of a registered tool failed")
	}
	unregister()
	if _, ok := r.Lookup("echo"); ok {
		t.Fatal("disposer did not unregister")
	}
	if r.Unregister("echo") {
		t.Fatal("unregistering twice reported success")
	}
}

func TestMeterCounts(t *testing.T) {
	st := &state{}
	r := newRegistry(t, st)
	m := pipeline.NewMeter(nil)
	r.OnExecute(m.Wrapper())
	for i := 0; i < 3; i++ {
		r.Execute(pipeline.NewCall(fmt.Sprint(i), "echo", json.RawMessage(`{"text":"hi"}`), nil, nil))
	}
	r.Execute(pipeline.NewCall("x", "echo", json.RawMessage(`{"text":5}`), nil, nil))
	if s := m.Stats("echo"); s.Calls != 4 || s.Errors != 1 {
		t.Errorf("stats %+v", s)
	}
}

func TestConcurrentCallsEachGetOneResult(t *testing.T) {
	st := &state{}
	r := newRegistry(t, st)
	var n atomic.Int64
	r.OnResult(func(*pipeline.Call, pipeline.Result) { n.Add(1) })
	var wg sync.WaitGroup
	for i := 0; i < 100; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			text := fmt.Sprint("t", i)
			res := r.Execute(pipeline.NewCall(fmt.Sprint(i), "echo", json.RawMessage(`{"text":"`+text+`"}`), nil, nil))
			if res.Text() != text {
				t.Errorf("call %d got %q", i, res.Text())
			}
		}(i)
	}
	waittest.Group(t, &wg, "the 100 concurrent calls to return")
	if n.Load() != 100 {
		t.Errorf("%d notifications for 100 calls", n.Load())
	}
}

// openTurnLog is a real session log with an open turn.
func openTurnLog(t testing.TB) *session.Log {
	t.Helper()
	l := sessiontest.New(t, "s1", "/ws")
	sessiontest.StartTurn(t, l)
	return l
}
