package pipeline

import (
	"errors"
	"fmt"
	"sort"
	"strings"
)

// Scoped is the registration surface of one scope, upstream's agent.ctx:
// everything registered through it applies to calls whose agent's scope is
// the scope or a descendant of it, and is removed when the scope ends. The
// surface of a nil scope is the plain (global) context: its registrations
// apply to every call and Restrict is refused.
//
// Listeners and wrappers join the one list of their event in registration
// order, global and scoped alike: the first registered admitted listener is
// the outermost. Guards run global first, then each scope of the calling
// agent's chain, farthest first (see [Registry.Execute]).
type Scoped struct {
	r *Registry
	s *Scope
}

// In returns the registration surface of scope s (nil: global).
func (r *Registry) In(s *Scope) Scoped { return Scoped{r: r, s: s} }

// Scope returns the scope registrations go to (nil: global).
func (sc Scoped) Scope() *Scope { return sc.s }

func scopedAdd[F any](sc Scoped, list *[]hook[F], fn F, prepend bool) (func(), error) {
	if sc.s == nil {
		return add(sc.r, list, fn, prepend, nil), nil
	}
	return sc.s.Own(func() func() { return add(sc.r, list, fn, prepend, sc.s) })
}

// OnPreExecute appends a pre-execute listener (inside the ones registered so far).
func (sc Scoped) OnPreExecute(l PreExecute) (remove func(), err error) {
	return scopedAdd(sc, &sc.r.pre, l, false)
}

// PrependPreExecute adds a pre-execute listener outside every one registered so far.
func (sc Scoped) PrependPreExecute(l PreExecute) (remove func(), err error) {
	return scopedAdd(sc, &sc.r.pre, l, true)
}

// AddGuard adds a guard for the scope and every scope below it.
func (sc Scoped) AddGuard(g Guard) (remove func(), err error) {
	return scopedAdd(sc, &sc.r.guards, g, false)
}

// OnExecute appends an execute wrapper (inside the ones registered so far).
func (sc Scoped) OnExecute(w Wrapper) (remove func(), err error) {
	return scopedAdd(sc, &sc.r.wrappers, w, false)
}

// PrependExecute adds an execute wrapper outside every one registered so far.
func (sc Scoped) PrependExecute(w Wrapper) (remove func(), err error) {
	return scopedAdd(sc, &sc.r.wrappers, w, true)
}

// OnPostExecute appends a post-execute listener.
func (sc Scoped) OnPostExecute(l PostExecute) (remove func(), err error) {
	return scopedAdd(sc, &sc.r.post, l, false)
}

// PrependPostExecute adds a post-execute listener outside every one registered so far.
func (sc Scoped) PrependPostExecute(l PostExecute) (remove func(), err error) {
	return scopedAdd(sc, &sc.r.post, l, true)
}

// OnResult adds a result observer for the scope's calls.
func (sc Scoped) OnResult(o ResultObserver) (remove func(), err error) {
	return scopedAdd(sc, &sc.r.observers, o, false)
}

// Filter is a tool-visibility mask (upstream tools.restrict). A nil slice is
// absent; a non-nil empty Allow admits nothing. A name is visible when Allow
// is absent or lists it, and Deny is absent or does not list it.
type Filter struct {
	// Allow, when non-nil, lists the only tool names the mask admits.
	Allow []string
	// Deny, when non-nil, lists tool names the mask hides.
	Deny []string
}

// mask is a compiled Filter (copied at registration).
type mask struct {
	allow, deny map[string]bool
}

func (m mask) admits(name string) bool {
	if m.allow != nil && !m.allow[name] {
		return false
	}
	return !m.deny[name]
}

func set(names []string) map[string]bool {
	if names == nil {
		return nil
	}
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// VERBATIM restrict errors (upstream packages/core/tools/src/index.ts:1074-1092).
var (
	// ErrRestrictUnscoped refuses a restriction through the global surface.
	ErrRestrictUnscoped = errors.New("tools.restrict() requires a scoped context (agent.ctx): a context-global restriction would mask every agent — deny the tool for the intended agent instead")
	// ErrRestrictEmpty refuses a filter with neither allow nor deny.
	ErrRestrictEmpty = errors.New("tools.restrict({}) is a no-op: pass `allow` and/or `deny` (an empty filter is almost always a materialized-empty-config bug)")
	// ErrRestrictRunCode refuses naming the Code Mode transport.
	ErrRestrictRunCode = errors.New(`tools.restrict() cannot name reserved Code Mode presentation transport "run_code"; restrict end-capability tools instead`)
)

// Restrict hides tools from the scope and every scope below it: the tool is
// absent from [Registry.ToolsFor] and a call to it fails at dispatch with
// `unknown tool "<name>"` (pre-execute listeners and guards still see the
// call). Masks intersect; the filter is copied now. Every name must be a tool
// registered now: an allow-mask hides tools registered later, a deny-mask
// admits them. Errors are upstream's VERBATIM texts.
func (sc Scoped) Restrict(f Filter) (remove func(), err error) {
	if sc.s == nil {
		return nil, ErrRestrictUnscoped
	}
	if f.Allow == nil && f.Deny == nil {
		return nil, ErrRestrictEmpty
	}
	m := mask{allow: set(f.Allow), deny: set(f.Deny)}
	named := append(append([]string(nil), f.Allow...), f.Deny...)
	for _, n := range named {
		if n == "run_code" {
			return nil, ErrRestrictRunCode
		}
	}
	if err := sc.r.checkKnown(named); err != nil {
		return nil, err
	}
	return scopedAdd(sc, &sc.r.masks, m, false)
}

// checkKnown refuses names that are not registered tools with the VERBATIM
// `tools.restrict() names unknown global tool(s) ...; known global tools: ...`.
func (r *Registry) checkKnown(names []string) error {
	r.mu.RLock()
	defer r.mu.RUnlock()
	var unknown []string
	seen := map[string]bool{}
	for _, n := range names {
		if _, ok := r.tools[n]; !ok && !seen[n] {
			seen[n] = true
			unknown = append(unknown, fmt.Sprintf("%q", n))
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	known := append([]string(nil), r.order...)
	sort.Strings(known)
	list := strings.Join(known, ", ")
	if list == "" {
		list = "(none)"
	}
	noun := "tool"
	if len(unknown) > 1 {
		noun = "tools"
	}
	return fmt.Errorf("tools.restrict() names unknown global %s %s; known global tools: %s", noun, strings.Join(unknown, ", "), list)
}

// visibleLocked reports whether every mask on chain admits name; r.mu is held.
func (r *Registry) visibleLocked(name string, chain []*Scope) bool {
	for _, m := range r.masks {
		if inChain(m.scope, chain) && !m.fn.admits(name) {
			return false
		}
	}
	return true
}

// ToolsFor returns the tools agent a sees (nil: an agentless call sees every
// global tool), in registration order: the global tools every restriction on
// its chain admits, then the tools registered through its chain's scopes
// ([Scoped.Register]; a scoped tool replaces a global one of its name).
func (r *Registry) ToolsFor(a *Agent) []Tool {
	chain := a.Scope().Chain()
	r.mu.RLock()
	defer r.mu.RUnlock()
	scoped := r.scopedForLocked(chain)
	own := map[string]bool{}
	for _, t := range scoped {
		own[t.Name] = true
	}
	var out []Tool
	for _, n := range r.order {
		if !own[n] && r.visibleLocked(n, chain) {
			out = append(out, r.tools[n].tool)
		}
	}
	return append(out, scoped...)
}

// inChain reports whether a registration tagged tag applies to a call whose
// scope chain is chain (nil tag: global, applies to every call).
func inChain(tag *Scope, chain []*Scope) bool {
	if tag == nil {
		return true
	}
	for _, s := range chain {
		if s == tag {
			return true
		}
	}
	return false
}

// admitted returns the registrations of list that apply to chain, in order.
func admitted[F any](list []hook[F], chain []*Scope) []hook[F] {
	out := make([]hook[F], 0, len(list))
	for _, h := range list {
		if inChain(h.scope, chain) {
			out = append(out, h)
		}
	}
	return out
}

// --8<-- [start:guard-order]
// guardOrder returns the guards that apply to chain in evaluation order:
// global guards first, then each scope of the chain farthest first, each in
// registration order (upstream T:1119-1128).
func guardOrder(list []hook[Guard], chain []*Scope) []hook[Guard] {
	out := make([]hook[Guard], 0, len(list))
	for _, g := range list {
		if g.scope == nil {
			out = append(out, g)
		}
	}
	for i := len(chain) - 1; i >= 0; i-- {
		for _, g := range list {
			if g.scope == chain[i] {
				out = append(out, g)
			}
		}
	}
	return out
}

// --8<-- [end:guard-order]
