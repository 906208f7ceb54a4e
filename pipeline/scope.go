package pipeline

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
)

// VERBATIM binding errors (upstream packages/core/scope/src/index.ts:54-82).
var (
	// ErrScopeCycle refuses a parent link that would make a scope its own ancestor.
	ErrScopeCycle = errors.New("dsh-scope: scope parent link would form a cycle")
	// ErrScopeBound refuses a second Bind of a scope that already has a parent.
	ErrScopeBound = errors.New("dsh-scope: scope key is already bound to a parent; re-linking requires the binding returned by the original bind")
)

// bindMu serialises every change of a parent link, so a cycle check and the
// link it permits are one step.
var bindMu sync.Mutex

// Scope is a registration scope: the scope of one agent ([Agent.Scope]) or a
// standing scope such as an agent preset's ([NewScope]). Scopes are compared
// by identity. A scope has at most one parent; the chain of a scope is the
// scope, its parent, its parent's parent and so on, nearest first.
//
// Registrations made through a scope ([Registry.In], and the approval
// service's scoped answerers) apply to calls of the scope's agent and of
// every agent whose scope descends from it, never the reverse. [Scope.End]
// removes every registration made through the scope; a call of an agent whose
// chain contains an ended scope is refused.
//
// The zero value is an unbound, live scope (every [Agent] holds one).
type Scope struct {
	name   string
	agent  *Agent
	parent atomic.Pointer[Scope]
	ended  atomic.Bool

	mu     sync.Mutex
	nextID uint64
	owned  []*ownership
}

type ownership struct {
	id     uint64
	once   sync.Once
	remove func()
}

// NewScope returns a standing scope (for example "agentPreset:standard"):
// agents' scopes are bound under it with [Scope.Bind].
func NewScope(name string) *Scope { return &Scope{name: name} }

// String names the scope in error messages.
func (s *Scope) String() string {
	switch {
	case s == nil:
		return "no scope"
	case s.agent != nil:
		return fmt.Sprintf("scope of agent %q", s.agent.ID)
	case s.name != "":
		return fmt.Sprintf("scope %q", s.name)
	}
	return "anonymous scope"
}

// Binding is the parent link made by [Scope.Bind]; only it can re-link.
type Binding struct {
	child *Scope
}

// Bind makes parent the parent of s. A scope binds once (a second Bind is
// [ErrScopeBound]); a link that would make s its own ancestor is
// [ErrScopeCycle].
func (s *Scope) Bind(parent *Scope) (*Binding, error) {
	bindMu.Lock()
	defer bindMu.Unlock()
	if s.parent.Load() != nil {
		return nil, ErrScopeBound
	}
	if err := s.link(parent); err != nil {
		return nil, err
	}
	return &Binding{child: s}, nil
}

// Relink moves the bound scope under parent (a recomposition). A link that
// would form a cycle is [ErrScopeCycle] and leaves the old link in place.
func (b *Binding) Relink(parent *Scope) error {
	bindMu.Lock()
	defer bindMu.Unlock()
	return b.child.link(parent)
}

// link sets the parent after the cycle check; bindMu is held.
func (s *Scope) link(parent *Scope) error {
	if parent == nil {
		return errors.New("dsh-scope: a parent scope is required")
	}
	for p := parent; p != nil; p = p.parent.Load() {
		if p == s {
			return ErrScopeCycle
		}
	}
	s.parent.Store(parent)
	return nil
}

// Parent returns the scope's parent, nil when it is unbound.
func (s *Scope) Parent() *Scope { return s.parent.Load() }

// Chain returns the scope and its ancestors, nearest first; nil for a nil scope.
func (s *Scope) Chain() []*Scope {
	var c []*Scope
	for p := s; p != nil; p = p.parent.Load() {
		c = append(c, p)
	}
	return c
}

// Within reports whether s is tag or a descendant of tag: whether a
// registration tagged with tag applies to calls whose scope is s. A nil tag
// (a global registration) applies to everything; nothing is within a scope
// from a nil s (an agentless call).
func (s *Scope) Within(tag *Scope) bool {
	if tag == nil {
		return true
	}
	for p := s; p != nil; p = p.parent.Load() {
		if p == tag {
			return true
		}
	}
	return false
}

// Own registers something through s: register runs under s's lock and
// returns the registration's remover. Own returns a remover that undoes
// exactly this registration (idempotent); [Scope.End] undoes it too. A scope
// that has ended refuses new registrations with an error and register is not
// called.
func (s *Scope) Own(register func() (remove func())) (remove func(), err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended.Load() {
		return nil, fmt.Errorf("pipeline: %s has ended: it takes no new registrations", s)
	}
	o := &ownership{remove: register()}
	s.nextID++
	o.id = s.nextID
	s.owned = append(s.owned, o)
	return func() { s.release(o) }, nil
}

// release undoes one ownership once and forgets it.
func (s *Scope) release(o *ownership) {
	o.once.Do(func() {
		s.mu.Lock()
		for i, x := range s.owned {
			if x == o {
				s.owned = append(s.owned[:i:i], s.owned[i+1:]...)
				break
			}
		}
		s.mu.Unlock()
		o.remove()
	})
}

// End ends the scope: it refuses new registrations, removes every
// registration made through it (last first), and from then on calls of an
// agent whose chain contains it are refused. End is idempotent; ending a
// parent scope does not end its children, but their calls are refused too.
func (s *Scope) End() {
	s.mu.Lock()
	s.ended.Store(true)
	owned := s.owned
	s.owned = nil
	s.mu.Unlock()
	for i := len(owned) - 1; i >= 0; i-- {
		s.release(owned[i])
	}
}

// Ended reports whether [Scope.End] was called.
func (s *Scope) Ended() bool { return s.ended.Load() }

// endedIn returns the first ended scope of chain, or nil.
func endedIn(chain []*Scope) *Scope {
	for _, s := range chain {
		if s.Ended() {
			return s
		}
	}
	return nil
}
