package stack

import (
	"context"
	"encoding/json"

	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/pipeline/policy"
	"github.com/dshsim/dshsim/pipeline/session"
	"github.com/dshsim/dshsim/sandbox"
	"github.com/dshsim/dshsim/stack/subagents"
	"github.com/dshsim/dshsim/tools/toolreg"
)

// host is the stack as the delegation runtime sees it ([subagents.Host]):
// what a child joins, and the surface of any of its agents.
type host struct{ s *Stack }

var _ subagents.Host = host{}

func (h host) Agent() *pipeline.Agent                              { return h.s.agent }
func (h host) Standing() *pipeline.Scope                           { return h.s.standing }
func (h host) In(scope *pipeline.Scope) pipeline.Scoped            { return h.s.reg.In(scope) }
func (h host) RegisterIn(sc pipeline.Scoped, t toolreg.Tool) error { return h.s.registerIn(sc, t) }
func (h host) DefaultMode() sandbox.Mode                           { return h.s.resolver.DefaultMode() }
func (h host) Definitions() []pipeline.Tool                        { return h.s.reg.Tools() }
func (h host) ToolsFor(a *pipeline.Agent) []pipeline.Tool          { return h.s.reg.ToolsFor(a) }
func (h host) WireTools(a *pipeline.Agent) []pipeline.Tool         { return h.s.wireTools(a) }
func (h host) PromptSections(a *pipeline.Agent) ([]PromptSection, error) {
	return h.s.promptSections(a)
}
func (h host) PendingCatalog(log *session.Log) (*CatalogMessage, error) {
	return h.s.pendingCatalog(log)
}
func (h host) UserMessageEntered(a *pipeline.Agent) { h.s.userMessageEntered(a) }

func (h host) SessionStarted(a *pipeline.Agent, source string, inject func(pipeline.ContextMessage)) {
	h.s.sessionStarted(a, source, inject)
}

func (h host) SubagentStarted(child *pipeline.Agent, inject func(pipeline.ContextMessage)) {
	for _, b := range h.s.bridges {
		b.SubagentStart(child, child.Session.ID(), inject)
	}
}

func (h host) SubagentEnded(child *pipeline.Agent) {
	for _, b := range h.s.bridges {
		b.SubagentStop(child, child.Session.ID())
	}
}

func (h host) Execute(ctx context.Context, a *pipeline.Agent, callID, name string, args json.RawMessage) pipeline.Result {
	return h.s.execute(ctx, a, callID, name, args)
}

func (h host) RuntimeContext(log *session.Log, extra ...policy.Section) (RuntimeContext, error) {
	return h.s.contextOf(log, extra...)
}

func (h host) PendingContext(log *session.Log, extra ...policy.Section) (*policy.SnapshotMessage, error) {
	return h.s.resolver.PendingContext(log, extra...)
}
