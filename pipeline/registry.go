package pipeline

import (
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"sync"

	"github.com/dshsim/dshsim/pipeline/argschema"
)

// Registry holds the tools and the four extension points of the pipeline
// (pre-execute listeners, guards, execute wrappers, post-execute listeners)
// plus the result observers. It is safe for concurrent use; registration
// publishes a new hook list, so a call in flight keeps the list it started with.
type Registry struct {
	mu    sync.RWMutex
	tools map[string]*toolEntry
	order []string
	hooks // the stages' hooks; a call runs with the ones that apply to it, taken at its start
	masks []hook[mask]
	// scopedTools are the tools registered through a scope (scopedtools.go).
	scopedTools []scopedTool
	logf        func(format string, args ...any)
	nextID      uint64
}

type toolEntry struct {
	tool Tool
	id   uint64
	// args checks the arguments before the body; nil when the tool
	// declares no parameter schema.
	args *argschema.Schema
}

// hook is one registration; scope is nil for a global one.
type hook[F any] struct {
	id    uint64
	fn    F
	scope *Scope
}

// Option configures a Registry.
type Option func(*Registry)

// WithLogf sets where contained failures (panicking result observers) are logged.
func WithLogf(f func(format string, args ...any)) Option { return func(r *Registry) { r.logf = f } }

// NewRegistry returns an empty registry.
func NewRegistry(opts ...Option) *Registry {
	r := &Registry{tools: map[string]*toolEntry{}, logf: log.Printf}
	for _, o := range opts {
		o(r)
	}
	return r
}

// SetApprover mounts (or, with nil, unmounts) the approval service used for
// ask decisions: the one way to set it. A call takes the service mounted
// when it starts.
func (r *Registry) SetApprover(a Approver) {
	r.mu.Lock()
	r.approver = a
	r.mu.Unlock()
}

// checkTool checks a registration (a name, a body) and compiles its
// parameter schema (nil when it has none).
func checkTool(t Tool) (*argschema.Schema, error) {
	if t.Name == "" {
		return nil, errors.New("pipeline: tool registration needs a name")
	}
	if t.Run == nil {
		return nil, fmt.Errorf("pipeline: tool %q has no body (Run is nil)", t.Name)
	}
	if len(t.Parameters) == 0 {
		return nil, nil
	}
	s, err := argschema.Compile(t.Parameters)
	if err != nil {
		return nil, fmt.Errorf("pipeline: tool %q: %w", t.Name, err)
	}
	return s, nil
}

// Register adds a tool. An empty name, a nil body or a name already registered
// is an error. The returned function unregisters exactly this registration.
func (r *Registry) Register(t Tool) (unregister func(), err error) {
	args, err := checkTool(t)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.tools[t.Name]; dup {
		return nil, fmt.Errorf("pipeline: tool %q is already registered", t.Name)
	}
	r.nextID++
	id := r.nextID
	r.tools[t.Name] = &toolEntry{tool: t, id: id, args: args}
	r.order = append(r.order, t.Name)
	return func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		if e, ok := r.tools[t.Name]; ok && e.id == id {
			r.removeLocked(t.Name)
		}
	}, nil
}

// CheckArgs runs the argument check the registry runs right before a tool's
// body, for a caller that runs the body itself (a test rig): the arguments
// against the tool's Parameters, violations as one INVALID_ARGS error. A tool
// without Parameters accepts anything.
func CheckArgs(t Tool, call *Call) error {
	if len(t.Parameters) == 0 {
		return nil
	}
	s, err := argschema.Compile(t.Parameters)
	if err != nil {
		return fmt.Errorf("pipeline: tool %q: %w", t.Name, err)
	}
	return checkArgs(s, call.args, t.ArgsRoot)
}

// RunsBeside reports whether a call of t may run in a pool beside other
// calls, as upstream's scheduler classifies it: only a ConcurrencySafe tool
// whose arguments pass its parameter schema (the classifier defineTool
// wraps refuses invalid arguments); a call its schema refuses, or arguments
// that are not JSON, run alone.
func RunsBeside(t Tool, args json.RawMessage) bool {
	if !t.ConcurrencySafe {
		return false
	}
	if len(t.Parameters) == 0 {
		return true
	}
	s, err := argschema.Compile(t.Parameters)
	return err == nil && len(s.Validate(args)) == 0
}

// checkArgs is the body stage's argument check (upstream's defineTool
// execute: validateJsonSchemaValue, then ToolArgsError). It runs after
// pre-execute, approval and guards, inside the execute wrappers, as the first
// thing the body does; no event of its own is emitted: the violations are
// the call's failure result.
func checkArgs(s *argschema.Schema, args json.RawMessage, root string) error {
	if s == nil {
		return nil
	}
	if v := s.ValidateAt(args, root); len(v) > 0 {
		return InvalidArgsError(v...)
	}
	return nil
}

// Unregister removes the tool named name and reports whether it was registered.
func (r *Registry) Unregister(name string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.tools[name]; !ok {
		return false
	}
	r.removeLocked(name)
	return true
}

func (r *Registry) removeLocked(name string) {
	delete(r.tools, name)
	order := make([]string, 0, len(r.order))
	for _, n := range r.order {
		if n != name {
			order = append(order, n)
		}
	}
	r.order = order
}

// Lookup returns the tool named name.
func (r *Registry) Lookup(name string) (Tool, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	e, ok := r.tools[name]
	if !ok {
		return Tool{}, false
	}
	return e.tool, true
}

// Tools returns the registered tools in registration order.
func (r *Registry) Tools() []Tool {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]Tool, 0, len(r.order))
	for _, n := range r.order {
		out = append(out, r.tools[n].tool)
	}
	return out
}

// add publishes a new list with fn appended (or prepended), tagged with scope
// (nil: global), and returns its remover.
func add[F any](r *Registry, list *[]hook[F], fn F, prepend bool, scope *Scope) func() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.nextID++
	h := hook[F]{id: r.nextID, fn: fn, scope: scope}
	next := make([]hook[F], 0, len(*list)+1)
	if prepend {
		next = append(append(next, h), *list...)
	} else {
		next = append(append(next, *list...), h)
	}
	*list = next
	return func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		out := make([]hook[F], 0, len(*list))
		for _, x := range *list {
			if x.id != h.id {
				out = append(out, x)
			}
		}
		*list = out
	}
}

// OnPreExecute appends a pre-execute listener (inside the ones already registered).
func (r *Registry) OnPreExecute(l PreExecute) (remove func()) { return add(r, &r.pre, l, false, nil) }

// PrependPreExecute adds a pre-execute listener outside every one registered so far.
func (r *Registry) PrependPreExecute(l PreExecute) (remove func()) {
	return add(r, &r.pre, l, true, nil)
}

// AddGuard appends a guard; guards run in registration order.
func (r *Registry) AddGuard(g Guard) (remove func()) { return add(r, &r.guards, g, false, nil) }

// OnExecute appends an execute wrapper (inside the ones already registered).
func (r *Registry) OnExecute(w Wrapper) (remove func()) { return add(r, &r.wrappers, w, false, nil) }

// PrependExecute adds an execute wrapper outside every one registered so far.
func (r *Registry) PrependExecute(w Wrapper) (remove func()) {
	return add(r, &r.wrappers, w, true, nil)
}

// OnPostExecute appends a post-execute listener.
func (r *Registry) OnPostExecute(l PostExecute) (remove func()) {
	return add(r, &r.post, l, false, nil)
}

// PrependPostExecute adds a post-execute listener outside every one registered so far.
func (r *Registry) PrependPostExecute(l PostExecute) (remove func()) {
	return add(r, &r.post, l, true, nil)
}

// OnResult adds a result observer (tools/result).
func (r *Registry) OnResult(o ResultObserver) (remove func()) {
	return add(r, &r.observers, o, false, nil)
}
