package pipeline_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/pipeline/pipelinetest"
)

// world is a registry with two constructed tools (read and write, bodies that
// only record that they ran) and a scope tree as upstream builds it: a preset
// standing scope with agents a and b bound under it, plus agent c bound under
// a (a deeper chain than upstream's roster makes, to show events flow up).
type world struct {
	r *pipeline.Registry
	// the scope tree; Scope and Agent name its scopes and agents for tables
	*pipelinetest.Scopes

	mu   sync.Mutex
	ran  []string // "<tool>@<agent>"
	seen []string // trace of listeners
}

func newWorld(t testing.TB) *world {
	t.Helper()
	w := &world{
		r:      pipeline.NewRegistry(pipeline.WithLogf(func(string, ...any) {})),
		Scopes: pipelinetest.NewScopes(t, &pipeline.Agent{ID: "a"}, &pipeline.Agent{ID: "b"}, &pipeline.Agent{ID: "c"}),
	}
	for _, name := range []string{"read", "write"} {
		name := name
		if _, err := w.r.Register(pipeline.Tool{Name: name, Run: func(ctx context.Context, call *pipeline.Call) (pipeline.Output, error) {
			who := "-"
			if call.Agent() != nil {
				who = call.Agent().ID
			}
			w.mu.Lock()
			w.ran = append(w.ran, name+"@"+who)
			w.mu.Unlock()
			return pipeline.Output{Content: []pipeline.Block{pipeline.TextBlock(name + " ok")}}, nil
		}}); err != nil {
			t.Fatal(err)
		}
	}
	return w
}

func (w *world) note(s string) {
	w.mu.Lock()
	w.seen = append(w.seen, s)
	w.mu.Unlock()
}

func (w *world) trace() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return strings.Join(w.seen, ",")
}

func (w *world) ranList() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return strings.Join(w.ran, ",")
}

// call runs one call of tool by agent (nil: agentless).
func (w *world) call(agent *pipeline.Agent, tool string) pipeline.Result {
	return w.r.Execute(pipeline.NewCall("c-"+tool, tool, json.RawMessage(`{}`), agent, context.Background()))
}

func mustReg(t testing.TB) func(func(), error) func() {
	return func(remove func(), err error) func() {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return remove
	}
}

func TestScopeBinding(t *testing.T) {
	tests := []struct {
		name string
		run  func(t *testing.T) error
		want error
	}{
		{"a first bind succeeds", func(t *testing.T) error {
			_, err := pipeline.NewScope("x").Bind(pipeline.NewScope("p"))
			return err
		}, nil},
		{"binding to itself is a cycle", func(t *testing.T) error {
			s := pipeline.NewScope("x")
			_, err := s.Bind(s)
			return err
		}, pipeline.ErrScopeCycle},
		{"binding to a descendant is a cycle", func(t *testing.T) error {
			p, c := pipeline.NewScope("p"), pipeline.NewScope("c")
			if _, err := c.Bind(p); err != nil {
				return err
			}
			_, err := p.Bind(c)
			return err
		}, pipeline.ErrScopeCycle},
		{"a second bind is refused", func(t *testing.T) error {
			s := pipeline.NewScope("x")
			if _, err := s.Bind(pipeline.NewScope("p1")); err != nil {
				return err
			}
			_, err := s.Bind(pipeline.NewScope("p2"))
			return err
		}, pipeline.ErrScopeBound},
		{"re-linking through the binding moves the scope", func(t *testing.T) error {
			s, p1, p2 := pipeline.NewScope("x"), pipeline.NewScope("p1"), pipeline.NewScope("p2")
			b, err := s.Bind(p1)
			if err != nil {
				return err
			}
			if err := b.Relink(p2); err != nil {
				return err
			}
			if s.Parent() != p2 || !s.Within(p2) || s.Within(p1) {
				t.Errorf("after relink: parent %v, within p2 %v, within p1 %v", s.Parent(), s.Within(p2), s.Within(p1))
			}
			return nil
		}, nil},
		{"a re-link forming a cycle is refused and keeps the old parent", func(t *testing.T) error {
			s, p, c := pipeline.NewScope("x"), pipeline.NewScope("p"), pipeline.NewScope("c")
			b, err := s.Bind(p)
			if err != nil {
				return err
			}
			if _, err := c.Bind(s); err != nil {
				return err
			}
			err = b.Relink(c)
			if s.Parent() != p {
				t.Errorf("parent after refused relink = %v, want p", s.Parent())
			}
			return err
		}, pipeline.ErrScopeCycle},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.run(t); !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
		})
	}
	if got := pipeline.ErrScopeCycle.Error(); got != "dsh-scope: scope parent link would form a cycle" {
		t.Errorf("cycle text %q", got)
	}
	if got := pipeline.ErrScopeBound.Error(); got != "dsh-scope: scope key is already bound to a parent; re-linking requires the binding returned by the original bind" {
		t.Errorf("rebind text %q", got)
	}
}

// surfaces registers one observing registration of every listener kind
// through sc, each noting "<kind>:<label>" when it sees a call.
var surfaces = []struct {
	kind     string
	register func(w *world, sc pipeline.Scoped, label string) (func(), error)
}{
	{"pre", func(w *world, sc pipeline.Scoped, label string) (func(), error) {
		return sc.OnPreExecute(func(ctx context.Context, call *pipeline.Call, next func() (pipeline.Decision, error)) (pipeline.Decision, error) {
			w.note("pre:" + label)
			return next()
		})
	}},
	{"guard", func(w *world, sc pipeline.Scoped, label string) (func(), error) {
		return sc.AddGuard(func(ctx context.Context, call *pipeline.Call) (string, bool) {
			w.note("guard:" + label)
			return "", false
		})
	}},
	{"execute", func(w *world, sc pipeline.Scoped, label string) (func(), error) {
		return sc.OnExecute(func(ctx context.Context, call *pipeline.Call, next func(context.Context) (pipeline.Result, error)) (pipeline.Result, error) {
			w.note("execute:" + label)
			return next(ctx)
		})
	}},
	{"post", func(w *world, sc pipeline.Scoped, label string) (func(), error) {
		return sc.OnPostExecute(func(ctx context.Context, call *pipeline.Call, res pipeline.Result, next func() (pipeline.PostDecision, error)) (pipeline.PostDecision, error) {
			w.note("post:" + label)
			return next()
		})
	}},
	{"result", func(w *world, sc pipeline.Scoped, label string) (func(), error) {
		return sc.OnResult(func(call *pipeline.Call, res pipeline.Result) { w.note("result:" + label) })
	}},
}

// TestScopedAdmission: a registration applies to calls of its scope's agent
// and of agents below it; never to a sibling, a parent or an agentless call
// (events flow up the chain, never down). A global one applies to all.
func TestScopedAdmission(t *testing.T) {
	tests := []struct {
		tag    string // where the registration is made
		caller string // which agent calls ("" agentless)
		sees   bool
	}{
		{"global", "", true},
		{"global", "a", true},
		{"global", "c", true},
		{"preset", "a", true},
		{"preset", "b", true},
		{"preset", "c", true},
		{"preset", "", false},
		{"a", "a", true},
		{"a", "c", true}, // c's scope is below a's
		{"a", "b", false},
		{"a", "", false},
		{"c", "c", true},
		{"c", "a", false}, // never down to the parent
		{"b", "a", false},
	}
	for _, s := range surfaces {
		for _, tc := range tests {
			t.Run(s.kind+"/"+tc.tag+"-sees-"+tc.caller, func(t *testing.T) {
				w := newWorld(t)
				mustReg(t)(s.register(w, w.r.In(w.Scope(tc.tag)), tc.tag))
				res := w.call(w.Agent(tc.caller), "read")
				if res.IsError {
					t.Fatalf("call failed: %s", res.Text())
				}
				if got := w.trace() != ""; got != tc.sees {
					t.Fatalf("%s registered for %s saw a call of %q: %v, want %v (trace %q)", s.kind, tc.tag, tc.caller, got, tc.sees, w.trace())
				}
			})
		}
	}
}

// TestListenerOrderIgnoresScope: global and scoped listeners are one list in
// registration order (prepend puts one first); the first is the outermost.
func TestListenerOrderIgnoresScope(t *testing.T) {
	w := newWorld(t)
	reg := mustReg(t)
	for _, x := range []struct{ label, tag string }{{"g1", "global"}, {"a1", "a"}, {"p1", "preset"}, {"g2", "global"}, {"c1", "c"}} {
		for _, s := range surfaces {
			if s.kind != "guard" {
				reg(s.register(w, w.r.In(w.Scope(x.tag)), x.label))
			}
		}
	}
	pre := func(label string) pipeline.PreExecute {
		return func(ctx context.Context, call *pipeline.Call, next func() (pipeline.Decision, error)) (pipeline.Decision, error) {
			w.note("pre:" + label)
			return next()
		}
	}
	reg(w.r.In(w.C.Scope()).PrependPreExecute(pre("c0")))
	w.call(w.C, "read")
	want := "pre:c0,pre:g1,pre:a1,pre:p1,pre:g2,pre:c1," +
		"execute:g1,execute:a1,execute:p1,execute:g2,execute:c1," +
		"post:g1,post:a1,post:p1,post:g2,post:c1," +
		"result:g1,result:a1,result:p1,result:g2,result:c1"
	if got := w.trace(); got != want {
		t.Fatalf("order\n got %s\nwant %s", got, want)
	}
}

// TestGuardOrder: global guards first, then each scope of the chain farthest
// first (preset, a, c), each in registration order, whatever order they were
// registered in; the first reason stops evaluation.
func TestGuardOrder(t *testing.T) {
	w := newWorld(t)
	reg := mustReg(t)
	guard := func(label string, deny bool) pipeline.Guard {
		return func(ctx context.Context, call *pipeline.Call) (string, bool) {
			w.note(label)
			return "denied by " + label, deny
		}
	}
	reg(w.r.In(w.C.Scope()).AddGuard(guard("c1", false)))
	reg(w.r.In(w.A.Scope()).AddGuard(guard("a1", false)))
	reg(w.r.In(w.Preset).AddGuard(guard("p1", false)))
	reg(w.r.In(nil).AddGuard(guard("g1", false)))
	reg(w.r.In(w.B.Scope()).AddGuard(guard("b1", true))) // a sibling: never runs for c
	reg(w.r.In(w.C.Scope()).AddGuard(guard("c2", true)))
	reg(w.r.In(w.Preset).AddGuard(guard("p2", false)))
	w.r.AddGuard(guard("g2", false))
	reg(w.r.In(w.C.Scope()).AddGuard(guard("c3", true)))

	res := w.call(w.C, "read")
	if got, want := w.trace(), "g1,g2,p1,p2,a1,c1,c2"; got != want {
		t.Errorf("guard order %s, want %s", got, want)
	}
	if res.Error == nil || res.Error.Message != "denied by c2" {
		t.Errorf("result %+v, want the first denial (c2)", res)
	}
	if w.ranList() != "" {
		t.Errorf("body ran: %s", w.ranList())
	}
}

// TestRemovers: each registration's remover undoes exactly it (two equal
// guards unwind independently); removers are idempotent.
func TestRemovers(t *testing.T) {
	w := newWorld(t)
	deny := func(ctx context.Context, call *pipeline.Call) (string, bool) { return "no writes", true }
	sc := w.r.In(w.A.Scope())
	r1 := mustReg(t)(sc.AddGuard(deny))
	r2 := mustReg(t)(sc.AddGuard(deny))
	steps := []struct {
		do   func()
		want bool // denied
	}{
		{func() {}, true},
		{r1, true},
		{r1, true}, // idempotent: does not remove r2
		{r2, false},
	}
	for i, s := range steps {
		s.do()
		if got := w.call(w.A, "write").IsError; got != s.want {
			t.Fatalf("step %d: denied %v, want %v", i, got, s.want)
		}
	}
}

// TestEndedScope: ending a scope removes every registration made through it
// (answerers included, see the approval tests), refuses new ones, and a call
// of an agent whose chain holds an ended scope is refused before any stage.
func TestEndedScope(t *testing.T) {
	w := newWorld(t)
	reg := mustReg(t)
	for _, s := range surfaces {
		reg(s.register(w, w.r.In(w.A.Scope()), "a"))
	}
	reg(w.r.In(w.A.Scope()).Restrict(pipeline.Filter{Deny: []string{"write"}}))
	w.A.Scope().End()
	w.A.Scope().End() // idempotent

	if _, err := w.r.In(w.A.Scope()).AddGuard(func(context.Context, *pipeline.Call) (string, bool) { return "", false }); err == nil {
		t.Error("a registration through an ended scope succeeded")
	}
	for _, x := range []struct {
		agent *pipeline.Agent
		want  string
	}{
		{w.A, `Error: agent "a" cannot call tools: scope of agent "a" has ended and its registrations were removed; the call was not run`},
		{w.C, `Error: agent "c" cannot call tools: scope of agent "a" has ended and its registrations were removed; the call was not run`},
	} {
		if got := w.call(x.agent, "read"); !got.IsError || got.Text() != x.want {
			t.Errorf("call of %s after end: %q, want %q", x.agent.ID, got.Text(), x.want)
		}
	}
	// b is a sibling: unaffected, and none of a's registrations reach it.
	if res := w.call(w.B, "write"); res.IsError {
		t.Errorf("sibling b's call failed: %s", res.Text())
	}
	if w.trace() != "" {
		t.Errorf("a's registrations still ran: %s", w.trace())
	}
	if w.ranList() != "write@b" {
		t.Errorf("bodies ran: %q, want only write@b", w.ranList())
	}
	if got := len(w.r.ToolsFor(w.B)); got != 2 {
		t.Errorf("b sees %d tools, want 2", got)
	}
}

// TestCallRunsOnce: a call object runs through the pipeline once; a second
// Execute of the same call is refused (state keyed by the call, such as an
// auto-review grant, cannot be replayed).
func TestCallRunsOnce(t *testing.T) {
	w := newWorld(t)
	call := pipeline.NewCall("c1", "write", json.RawMessage(`{}`), w.A, context.Background())
	if res := w.r.Execute(call); res.IsError {
		t.Fatalf("first run: %s", res.Text())
	}
	if res := w.r.Execute(call); !res.IsError || res.Text() != `Error: tool call "c1" was already executed: a call runs once (make a new call)` {
		t.Fatalf("second run: %q", res.Text())
	}
	if w.ranList() != "write@a" {
		t.Fatalf("bodies ran %q", w.ranList())
	}
}

func toolNames(ts []pipeline.Tool) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.Name)
	}
	return out
}

func TestRestrictErrors(t *testing.T) {
	tests := []struct {
		name   string
		tools  []string // registered besides read and write
		scope  string
		filter pipeline.Filter
		want   string
	}{
		{"global context", nil, "global", pipeline.Filter{Deny: []string{"write"}},
			"tools.restrict() requires a scoped context (agent.ctx): a context-global restriction would mask every agent — deny the tool for the intended agent instead"},
		{"empty filter", nil, "a", pipeline.Filter{},
			"tools.restrict({}) is a no-op: pass `allow` and/or `deny` (an empty filter is almost always a materialized-empty-config bug)"},
		{"run_code", nil, "a", pipeline.Filter{Allow: []string{"read", "run_code"}},
			`tools.restrict() cannot name reserved Code Mode presentation transport "run_code"; restrict end-capability tools instead`},
		{"one unknown name", []string{"bash"}, "a", pipeline.Filter{Allow: []string{"read", "grep"}},
			`tools.restrict() names unknown global tool "grep"; known global tools: bash, read, write`},
		{"two unknown names, deduplicated", nil, "a", pipeline.Filter{Allow: []string{"grep"}, Deny: []string{"edit", "grep"}},
			`tools.restrict() names unknown global tools "grep", "edit"; known global tools: read, write`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			for _, n := range tc.tools {
				w.r.Register(pipeline.Tool{Name: n, Run: func(context.Context, *pipeline.Call) (pipeline.Output, error) { return pipeline.Output{}, nil }})
			}
			_, err := w.r.In(w.Scope(tc.scope)).Restrict(tc.filter)
			if err == nil || err.Error() != tc.want {
				t.Fatalf("err = %v\nwant %s", err, tc.want)
			}
		})
	}
	t.Run("no tools at all", func(t *testing.T) {
		r := pipeline.NewRegistry()
		_, err := r.In(pipeline.NewScope("s")).Restrict(pipeline.Filter{Deny: []string{"x"}})
		if want := `tools.restrict() names unknown global tool "x"; known global tools: (none)`; err == nil || err.Error() != want {
			t.Fatalf("err = %v, want %s", err, want)
		}
	})
}

// TestRestrictVisibility: masks hide tools from the scope's view and its
// descendants', a hidden call fails at dispatch with UNKNOWN_TOOL after
// pre-execute and the guards saw it, masks intersect, allow excludes tools
// registered later and deny admits them, and the filter is copied.
func TestRestrictVisibility(t *testing.T) {
	w := newWorld(t)
	reg := mustReg(t)
	reg(w.r.In(nil).OnPreExecute(func(ctx context.Context, call *pipeline.Call, next func() (pipeline.Decision, error)) (pipeline.Decision, error) {
		w.note("pre:" + call.Name())
		return next()
	}))
	reg(w.r.In(nil).AddGuard(func(ctx context.Context, call *pipeline.Call) (string, bool) {
		w.note("guard:" + call.Name())
		return "", false
	}))
	allow := []string{"read"}
	liftAllow := reg(w.r.In(w.A.Scope()).Restrict(pipeline.Filter{Allow: allow}))
	allow[0] = "write" // copied at registration: no effect
	view := func(a *pipeline.Agent) []string { return toolNames(w.r.ToolsFor(a)) }

	if diff := cmp.Diff([]string{"read"}, view(w.A)); diff != "" {
		t.Errorf("a's view (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"read"}, view(w.C)); diff != "" {
		t.Errorf("c (below a) view (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"read", "write"}, view(w.B)); diff != "" {
		t.Errorf("sibling b's view (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"read", "write"}, view(nil)); diff != "" {
		t.Errorf("agentless view (-want +got):\n%s", diff)
	}
	res := w.call(w.A, "write")
	if res.Text() != `Error: unknown tool "write"` || res.Error.Info == nil || res.Error.Info.Code != "UNKNOWN_TOOL" {
		t.Errorf("hidden call: %+v", res)
	}
	if got := w.trace(); got != "pre:write,guard:write" {
		t.Errorf("policy saw %q, want pre and guard to see the hidden call", got)
	}
	// A child's mask does not reach its parent.
	liftDeny := reg(w.r.In(w.C.Scope()).Restrict(pipeline.Filter{Deny: []string{"read"}}))
	if diff := cmp.Diff([]string{"read"}, view(w.A)); diff != "" {
		t.Errorf("a's view after c's mask (-want +got):\n%s", diff)
	}
	if got := view(w.C); len(got) != 0 {
		t.Errorf("c's view with both masks = %v, want none (masks intersect)", got)
	}
	// Live: a tool registered later is hidden by a's allow-mask but admitted
	// by c's deny-mask once a's mask is lifted.
	w.r.Register(pipeline.Tool{Name: "grep", Run: func(context.Context, *pipeline.Call) (pipeline.Output, error) { return pipeline.Output{}, nil }})
	if got := view(w.A); cmp.Diff([]string{"read"}, got) != "" {
		t.Errorf("a's allow-mask admits a later tool: %v", got)
	}
	liftAllow()
	if diff := cmp.Diff([]string{"write", "grep"}, view(w.C)); diff != "" {
		t.Errorf("c's view after lifting a's mask (-want +got):\n%s", diff)
	}
	liftDeny()
	if diff := cmp.Diff([]string{"read", "write", "grep"}, view(w.C)); diff != "" {
		t.Errorf("c's view with no masks (-want +got):\n%s", diff)
	}
}

// TestRestrictEmptyAllowHidesEverything: a non-nil empty allow-list admits
// nothing (upstream's restrict({allow: []})); it is not an absent one, which
// would admit everything.
func TestRestrictEmptyAllowHidesEverything(t *testing.T) {
	w := newWorld(t)
	reg := mustReg(t)
	lift := reg(w.r.In(w.A.Scope()).Restrict(pipeline.Filter{Allow: []string{}}))
	if got := toolNames(w.r.ToolsFor(w.A)); len(got) != 0 {
		t.Errorf("a's view under allow [] = %v, want none", got)
	}
	if res := w.call(w.A, "read"); res.Text() != `Error: unknown tool "read"` {
		t.Errorf("a call under allow []: %q, want unknown tool", res.Text())
	}
	if diff := cmp.Diff([]string{"read", "write"}, toolNames(w.r.ToolsFor(w.B))); diff != "" {
		t.Errorf("sibling b's view (-want +got):\n%s", diff)
	}
	lift()
	if diff := cmp.Diff([]string{"read", "write"}, toolNames(w.r.ToolsFor(w.A))); diff != "" {
		t.Errorf("a's view after lifting the mask (-want +got):\n%s", diff)
	}
}
