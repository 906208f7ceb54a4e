package hooks

import (
	"context"
	"sync"

	"github.com/dshsim/dshsim/pipeline"
)

// detachedRuns are a bridge's lifecycle runs in flight (upstream's
// createDetachedRuns): tracked, and cancelled then waited for by Drain.
type detachedRuns struct {
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

func (d *detachedRuns) init() { d.ctx, d.cancel = context.WithCancel(context.Background()) }

// SessionStart runs the SessionStart hooks whose matcher selects source
// ("startup" for a new session, a child's included; "resume") for agent,
// detached from the agent's work, as upstream's agent/session-start
// listener does: the first matching hook takes its handler id now (the
// emit is synchronous), each later one when it starts; nothing is logged;
// when they have all run, their context (Codex: also a clean plain stdout)
// is handed to inject, which enters it at the agent's next step without
// waking it. A bridge whose config did not load runs nothing.
func (b *Bridge) SessionStart(agent *pipeline.Agent, source string, inject func(pipeline.ContextMessage)) {
	b.detach(SessionStart, agent, source, callFacts{Source: source}, inject)
}

// SubagentStart runs the SubagentStart hooks (Claude Code; the matcher
// subject is [SubagentType]) for child, whose id is agentID, detached as
// [Bridge.SessionStart]: their context goes to inject (the child's next
// step). The delegation runtime calls it once the child's run has started.
func (b *Bridge) SubagentStart(child *pipeline.Agent, agentID string, inject func(pipeline.ContextMessage)) {
	b.detach(SubagentStart, child, SubagentType, callFacts{AgentID: agentID}, inject)
}

// SubagentStop runs the SubagentStop hooks (Claude Code) for child, whose
// id is agentID, detached, when its run or activation settled; their
// output is not used.
func (b *Bridge) SubagentStop(child *pipeline.Agent, agentID string) {
	b.detach(SubagentStop, child, SubagentType, callFacts{AgentID: agentID}, nil)
}

// detach starts point's matching hooks in the background, the first one's
// handler id taken before it returns.
func (b *Bridge) detach(point Point, agent *pipeline.Agent, subject string, facts callFacts, inject func(pipeline.ContextMessage)) {
	if b.cfg == nil {
		return
	}
	pr, err := b.prepare(point, agent, subject, facts, false)
	if err != nil || pr == nil { // unlogged: the scope reads no log, so it cannot fail
		return
	}
	first := b.nextID(point)
	b.detached.wg.Add(1)
	go func() {
		defer b.detached.wg.Done()
		m, _ := pr.exec(b.detached.ctx, first) // unlogged: no log error
		if inject != nil && len(m.contexts) > 0 {
			inject(pipeline.ContextMessage{Plugin: b.d.Plugin, Texts: append([]string(nil), m.contexts...)})
		}
	}()
}

// Drain cancels the lifecycle hooks still running (their process groups
// are killed as a cancelled call's are) and waits for them, as upstream's
// bridge does when it is disposed. It is safe to call more than once.
func (b *Bridge) Drain() {
	b.detached.cancel()
	b.detached.wg.Wait()
}
