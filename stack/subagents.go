package stack

import (
	"github.com/dshsim/dshsim/stack/subagents"
	"github.com/dshsim/dshsim/tools/subagent"
	"github.com/dshsim/dshsim/tools/toolreg"
)

// The delegation runtime is package stack/subagents; these are its types
// under the names the stack's callers use.
type (
	// Child is a delegated child agent ([subagents.Child]).
	Child = subagents.Child
	// ChildInfo is what a child is ([subagents.ChildInfo]).
	ChildInfo = subagents.ChildInfo
	// Delegation describes one delegated child ([subagents.Delegation]).
	Delegation = subagents.Delegation
	// Message is a message delivered to an agent's inbox ([subagents.Message]).
	Message = subagents.Message
	// Loop is one live agent's loop ([subagents.Loop]).
	Loop = subagents.Loop
	// Loops starts a child's loop ([subagents.Loops]).
	Loops = subagents.Loops
	// Provider is a subagent provider beyond spawn and fork ([subagents.Provider]).
	Provider = subagents.Provider
	// SubagentEnd is the live subagent/end of a child ([subagents.End]).
	SubagentEnd = subagents.End
	// SubagentsConfig composes delegation ([subagents.Config]).
	SubagentsConfig = subagents.Config
	// RuntimeContext is the runtime-context message the model sees next
	// ([subagents.RuntimeContext]).
	RuntimeContext = subagents.RuntimeContext
	// Section is one named section of the runtime-context message
	// ([subagents.ContextSection]).
	Section = subagents.ContextSection
)

// Providers of in-process children.
const (
	// ProviderSpawn starts a fresh child (its own context).
	ProviderSpawn = subagents.ProviderSpawn
	// ProviderFork seeds the child's log with the parent's completed turns.
	ProviderFork = subagents.ProviderFork
)

// The sources of a session's start ([Stack.SessionStarted]).
const (
	SourceStartup = subagents.SourceStartup
	SourceResume  = subagents.SourceResume
)

// DefaultSubagents is upstream's default ACP composition of delegation
// ([subagents.Default]).
func DefaultSubagents() SubagentsConfig { return subagents.Default() }

// Delegate starts a child of the session's agent (or of d.Parent)
// ([subagents.Runtime.Delegate]).
func (s *Stack) Delegate(d Delegation) (*Child, error) { return s.children.Delegate(d) }

// AdoptChild records a child session persisted before the stack started
// (a cold child of a resumed session; [subagents.Runtime.Adopt]).
func (s *Stack) AdoptChild(path string) error { return s.children.Adopt(path) }

// AttachLoop registers the session agent's loop: settlement notices and
// reports of its children are delivered through it.
func (s *Stack) AttachLoop(l Loop) { s.children.AttachLoop(s.agent, l) }

// delegationTools composes the delegation tools over the runtime
// (Config.Subagents); ask_user_question and the workflow tool are lines of
// their own.
func (s *Stack) delegationTools() ([]toolreg.Tool, error) {
	cfg := s.cfg.Subagents
	return subagent.New(subagent.Config{Instances: cfg.Instances, Control: cfg.Control, Service: s.children, Jobs: s.jobs})
}
