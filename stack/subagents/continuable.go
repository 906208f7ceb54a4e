package subagents

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/dshsim/dshsim/llm"
	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/pipeline/delegation"
	"github.com/dshsim/dshsim/pipeline/session"
	"github.com/dshsim/dshsim/tools/subagent"
)

// relaySource is the source of a relayed message: a coordinator's
// send_message or a child's report.
type relaySource struct {
	Kind            string `json:"kind"`
	Form            string `json:"form"`
	SenderSessionID string `json:"senderSessionId"`
}

// noticeSource is the source of a settlement notice.
type noticeSource struct {
	Kind            string `json:"kind"`
	Form            string `json:"form"`
	Summary         string `json:"summary"`
	SenderSessionID string `json:"senderSessionId"`
}

// subagentError is a SubagentError with its code (upstream's).
func subagentError(code, format string, args ...any) error {
	return pipeline.NewErrorf("SubagentError", code, format, args...)
}

// activation is one live continuable child: it takes turns while messages
// arrive and settles (is disposed, and its parent told) once it is idle
// with no child of its own still live.
type activation struct {
	rt       *Runtime
	child    *Child
	loop     Loop
	parentID string
	boundary int // the events before this activation

	mu        sync.Mutex
	announced bool
	watching  bool
	owned     map[string]bool
	disposing chan struct{} // closed once the disposal finished; nil while live
	poke      chan struct{}
}

// StartContinuable starts a continuable child and hands it its prompt
// ([subagent.Service]); the id returns once its inbox accepted the prompt.
func (rt *Runtime) StartContinuable(ctx context.Context, provider string, req subagent.Request) (string, error) {
	if provider != ProviderSpawn && provider != ProviderFork {
		return "", subagentError("UNSUPPORTED_CAPABILITY", "subagent provider %q does not support continuable children (no prepareContinuable capability)", provider)
	}
	c, loop, err := rt.newChild(provider, req, true)
	if err != nil {
		return "", err
	}
	a := rt.activate(c, loop, 0)
	if _, err := a.submit(textContent(req.Prompt), userSource{"user"}); err != nil {
		return "", errors.Join(err, a.dispose())
	}
	return c.info.SessionID, nil
}

// activate registers a live continuable child; its first message starts
// the watch that settles it.
func (rt *Runtime) activate(c *Child, loop Loop, boundary int) *activation {
	a := &activation{rt: rt, child: c, loop: loop, parentID: c.info.ParentSession, boundary: boundary, owned: map[string]bool{}, poke: make(chan struct{})}
	rt.mu.Lock()
	rt.activations[c.info.SessionID] = a
	if p := rt.activations[a.parentID]; p != nil {
		p.mu.Lock()
		p.owned[c.info.SessionID] = true
		p.mu.Unlock()
	}
	rt.mu.Unlock()
	rt.host.SubagentStarted(c.agent, injector(loop))
	return a
}

// submit queues content as the child's next turn; the start is announced
// (the parent is told when it settles).
func (a *activation) submit(content []json.RawMessage, source any) (string, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.disposing != nil {
		return "", subagentError("ACTIVATION_CLOSING", "subagent %q activation is being disposed; the message was not accepted", a.child.info.SessionID)
	}
	m := userMessage(content, source)
	if err := a.loop.Followup(m); err != nil {
		return "", err
	}
	a.announced = true
	if !a.watching { // from the first message on: an activation is never idle before it
		a.watching = true
		go a.watch()
	}
	a.wake()
	return m.ID, nil
}

// wake pokes the watcher (a.mu held).
func (a *activation) wake() {
	close(a.poke)
	a.poke = make(chan struct{})
}

// watch waits until the child is idle with no live child of its own, then
// disposes it and tells its parent.
func (a *activation) watch() {
	for {
		a.loop.WhenIdle(context.Background())
		a.mu.Lock()
		if a.loop.Idle() && len(a.owned) == 0 && a.disposing == nil {
			a.disposing = make(chan struct{})
			a.mu.Unlock()
			break
		}
		poke := a.poke
		settling := a.disposing != nil
		a.mu.Unlock()
		if settling {
			return
		}
		if a.loop.Idle() {
			<-poke
		}
	}
	a.settle()
}

// dispose settles a live activation now (a failed start's rollback).
func (a *activation) dispose() error {
	a.mu.Lock()
	if a.disposing != nil {
		done := a.disposing
		a.mu.Unlock()
		<-done
		return nil
	}
	a.disposing = make(chan struct{})
	a.announced = false
	a.mu.Unlock()
	return a.settle()
}

// settle ends the activation: the loop stops, the child ends, the parent
// is told (when the start was announced), the parent's ownership is
// released and subagent/end is reported.
func (a *activation) settle() error {
	rt := a.rt
	id := a.child.info.SessionID
	a.loop.Cancel(false)
	err := a.loop.Close()
	events, rerr := a.child.log.Events()
	err = errors.Join(err, rerr, a.child.End())
	rt.forget(a.child.agent)
	own := events[min(a.boundary, len(events)):]
	stop := epochStop(own)
	if err != nil {
		stop = delegation.StopError
	}
	output := delegation.SelectOutput(own)
	rt.mu.Lock()
	delete(rt.activations, id)
	rt.mu.Unlock()
	a.mu.Lock()
	announced := a.announced
	a.mu.Unlock()
	if announced {
		rt.notify(a.parentID, id, stop, output)
	}
	rt.release(a.parentID, id)
	close(a.disposing)
	rt.end(a.child, stop)
	return err
}

// epochStop is how an activation's turns ended (upstream's epoch stop
// reason): its last turn's, a turn that never ended counting as completed.
func epochStop(events []session.Event) delegation.StopReason {
	kind := delegation.LastTurnEnd(events)
	if kind == "" {
		return delegation.StopCompleted
	}
	return delegation.StopReasonOf(kind)
}

// notify sends the settlement notice to the child's parent: a new turn of
// a parent that runs no turn, the next step of one that does; nobody when
// the parent is not live.
func (rt *Runtime) notify(parentID, childID string, stop delegation.StopReason, output []json.RawMessage) {
	loop, _ := rt.loopOf(parentID)
	if loop == nil {
		return
	}
	summary := delegation.SettlementSummary(childID, stop)
	m := userMessage(delegation.SettlementContent(summary, output), noticeSource{Kind: "subagent-settled", Form: "notice", Summary: llm.BoundSummary(summary), SenderSessionID: childID})
	if loop.Running() {
		loop.Steer(m)
	} else {
		loop.Followup(m)
	}
}

// release drops a settled child from its parent activation's owned set.
func (rt *Runtime) release(parentID, childID string) {
	rt.mu.Lock()
	p := rt.activations[parentID]
	rt.mu.Unlock()
	if p == nil {
		return
	}
	p.mu.Lock()
	delete(p.owned, childID)
	p.wake()
	p.mu.Unlock()
}

// Followup relays message to the caller's continuable child as its next
// turn ([subagent.Service]); a settled child is resumed cold from its log.
func (rt *Runtime) Followup(ctx context.Context, caller *pipeline.Agent, childID, message string) (string, error) {
	content := textContent(message)
	source := relaySource{Kind: "coordinator", Form: "relay", SenderSessionID: caller.Session.ID()}
	for {
		rt.mu.Lock()
		a := rt.activations[childID]
		rec := rt.records[childID]
		rt.mu.Unlock()
		if a == nil {
			return rt.coldResume(caller, childID, rec, content, source)
		}
		if rec.header.ParentSession != caller.Session.ID() {
			return "", subagentError("UNAUTHORIZED", "subagent %q belongs to another parent session", childID)
		}
		a.mu.Lock()
		closing := a.disposing
		a.mu.Unlock()
		if closing == nil {
			if id, err := a.submit(content, source); err == nil || !pipeline.HasCode(err, "ACTIVATION_CLOSING") {
				return id, err
			}
			continue
		}
		select {
		case <-closing:
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}
}

// coldResume re-materializes a settled continuable child from its log (a
// new activation; nothing is appended for the policy) and hands it the
// message.
func (rt *Runtime) coldResume(caller *pipeline.Agent, childID string, rec *record, content []json.RawMessage, source any) (string, error) {
	if rec == nil {
		return "", subagentError("NOT_RESUMABLE", "subagent %q is unavailable", childID)
	}
	if rec.header.ParentSession != caller.Session.ID() {
		return "", subagentError("UNAUTHORIZED", "subagent %q belongs to another parent session", childID)
	}
	if !rec.continuous {
		return "", subagentError("NOT_RESUMABLE", "subagent %q has no supported continuation state and cannot be resumed; do not retry send_message with this id", childID)
	}
	c, err := rt.resume(rec, rt.cfg.Report)
	if err != nil {
		return "", subagentError("NOT_RESUMABLE", "subagent %q is unavailable", childID)
	}
	loop, err := rt.cfg.Loops.Start(c)
	if err != nil {
		return "", errors.Join(err, c.End())
	}
	rt.mu.Lock()
	rt.loops[c.agent] = loop
	rt.mu.Unlock()
	rt.host.SessionStarted(c.agent, SourceResume, injector(loop))
	events, _ := c.log.Events()
	a := rt.activate(c, loop, len(events))
	id, err := a.submit(content, source)
	if err != nil {
		return "", errors.Join(err, a.dispose())
	}
	return id, nil
}

// resume reopens a continuable child's log under a new scope, composed from
// its record (the tool filter, the report tool); it appends nothing.
func (rt *Runtime) resume(rec *record, report bool) (*Child, error) {
	log, err := session.Open(rec.path)
	if err != nil {
		return nil, err
	}
	h := log.Header()
	c := &Child{rt: rt, log: log, agent: &pipeline.Agent{ID: h.ID, Session: log}, descriptor: rec.descriptor, described: true,
		info: ChildInfo{SessionID: h.ID, ParentSession: h.ParentSession, Provider: rec.descriptor.Provider, Continuable: true, Resumed: true, Depth: h.DelegationDepth, SeedLength: h.SeedLength}}
	if err := c.compose(Delegation{Continuation: Continuation{Continuable: true, Report: report}, Restriction: Restriction{ToolFilter: rec.filter}}); err != nil {
		c.agent.Scope().End()
		return nil, errors.Join(err, log.Close())
	}
	return c, nil
}

// Interrupt cancels the current turn of a live continuable descendant of
// caller, its queue kept ([subagent.Service]); a settled or unknown target
// is an accepted no-op.
func (rt *Runtime) Interrupt(caller *pipeline.Agent, targetID string) error {
	callerID := caller.Session.ID()
	if callerID == targetID {
		return subagentError("UNAUTHORIZED", "agent %q cannot interrupt itself", callerID)
	}
	rt.mu.Lock()
	a := rt.activations[targetID]
	rt.mu.Unlock()
	if a == nil {
		return nil
	}
	if !rt.descends(targetID, callerID) {
		return subagentError("UNAUTHORIZED", "subagent %q is not a live descendant of agent %q", targetID, callerID)
	}
	a.mu.Lock()
	closing := a.disposing != nil
	a.mu.Unlock()
	if !closing {
		a.loop.Cancel(true)
	}
	return nil
}

// descends reports whether the session id descends from ancestor.
func (rt *Runtime) descends(id, ancestor string) bool {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	for seen := 0; seen <= len(rt.records); seen++ {
		r := rt.records[id]
		if r == nil {
			return false
		}
		if r.header.ParentSession == ancestor {
			return true
		}
		id = r.header.ParentSession
	}
	return false
}

// Report relays output from the calling continuable child to its direct
// parent's next step ([subagent.Service]).
func (rt *Runtime) Report(ctx context.Context, caller *pipeline.Agent, output string) (string, error) {
	if ctx.Err() != nil {
		return "", ctx.Err()
	}
	id := ""
	if caller != nil && caller.Session != nil {
		id = caller.Session.ID()
	}
	rt.mu.Lock()
	a := rt.activations[id]
	rt.mu.Unlock()
	if a == nil || a.child.agent != caller {
		return "", subagentError("UNAUTHORIZED", "agent %q is not a live continuable subagent and cannot report", id)
	}
	loop, _ := rt.loopOf(a.parentID)
	if loop == nil {
		return "", subagentError("PARENT_UNAVAILABLE", "direct parent is not live; report was not delivered")
	}
	m := userMessage(delegation.ReportContent(id, output), relaySource{Kind: "subagent-report", Form: "relay", SenderSessionID: id})
	if err := loop.Steer(m); err != nil {
		return "", fmt.Errorf("%w", subagentError("PARENT_UNAVAILABLE", "direct parent is not live; report was not delivered"))
	}
	return m.ID, nil
}

// List lists the caller's children (or every descendant, pre-order) with
// their status: running (a live agent working), idle (live, between
// turns), ready (only in storage) ([subagent.Service]).
func (rt *Runtime) List(ctx context.Context, caller *pipeline.Agent, descendants bool) ([]subagent.Entry, error) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	children := map[string][]*record{}
	for _, r := range rt.order {
		children[r.header.ParentSession] = append(children[r.header.ParentSession], r)
	}
	var out []subagent.Entry
	var walk func(parent string, depth int)
	walk = func(parent string, depth int) {
		for _, r := range children[parent] {
			out = append(out, rt.entryLocked(r, parent, depth))
			if descendants {
				walk(r.header.ID, depth+1)
			}
		}
	}
	walk(caller.Session.ID(), 1)
	return out, nil
}

// entryLocked is one row (rt.mu held).
func (rt *Runtime) entryLocked(r *record, parent string, depth int) subagent.Entry {
	if r.diagnostic != "" {
		return subagent.Entry{ID: r.header.ID, Diagnostic: r.diagnostic, Parent: parent, Depth: depth}
	}
	e := subagent.Entry{ID: r.header.ID, Continuable: r.continuous, Label: r.descriptor.Label, Status: "ready", Parent: parent, Depth: depth}
	for a, l := range rt.loops {
		if a.Session != nil && a.Session.ID() == r.header.ID {
			e.Status = "idle"
			if l.Running() {
				e.Status = "running"
			}
		}
	}
	return e
}
