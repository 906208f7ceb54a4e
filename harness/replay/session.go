package replay

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/dshsim/dshsim/harness/replay/recording"
	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/pipeline/delegation"
	"github.com/dshsim/dshsim/pipeline/session"
	"github.com/dshsim/dshsim/stack"
	"github.com/dshsim/dshsim/tools/jobs"
)

// sessionSetup is what one replayed session is made of.
type sessionSetup struct {
	rec       *recording.Recording
	cfg       stack.Config
	ws        string
	logDir    string // where child logs go
	log       *session.Log
	sessionID string
	script    *recording.Script
	info      ModelInfo // how the constructed model is named
	route     ModelInfo // the recorded model (a continuable descriptor's route)
	answers   *answers
	wire      *bridge
	// delegation composes the subagent tools and their runtime.
	delegation bool
}

// sessionRun is one replayed session: the stack, the session's agent loop,
// the client driving it, the children and the emulated fixtures.
type sessionRun struct {
	stack   *stack.Stack
	root    *driver
	model   *scriptedModel
	client  *client
	family  *family
	fixture *emulation
	settle  *settler

	mu      sync.Mutex
	drivers map[string]*driver // by session id: where a job's notice goes
}

// startSession composes the stack for s (with delegation: the children's
// loops, ids and scripts from the family, the fixtures), writes the events
// the recorded session was created with, and starts the session's agent
// loop.
func startSession(ctx context.Context, s sessionSetup) (*sessionRun, error) {
	run := &sessionRun{drivers: map[string]*driver{}, fixture: newEmulation(s.rec.Settings.SubagentFixture, s.ws)}
	gate := jobs.NewGate() // upstream's host observes jobs only when it yields
	cfg := s.cfg
	cfg.Jobs.Gate, cfg.Answer = gate, s.answers.answer
	cfg.Jobs.Notify = run.deliver
	if s.delegation {
		run.family = newFamily(s.rec, s.sessionID)
		sub := run.fixture.subagentConfig(s.rec)
		sub.Loops, sub.NewID, sub.SessionsDir = run.family, run.family.NewID, s.logDir
		if s.rec.Marks() {
			sub.OnEnd = run.fixture.onEnd
		}
		sub.Route = delegation.Route{Provider: s.route.Provider, Model: s.route.Model}
		cfg.Subagents = &sub
	}
	st, err := stack.New(cfg)
	if err != nil {
		return nil, err
	}
	run.stack = st
	s.wire.imagePrompts = st.Attachments() != nil && st.ImageInput()
	if p := s.rec.Settings.ImagePrompts; p != nil {
		s.wire.imagePrompts = *p
	}
	run.settle = newSettler("/proc", st.RunningJobPIDs)
	info := s.info
	info.Retry = retryPolicy(s.rec.Settings.RetryPolicy)
	newModel := func(script *recording.Script) *scriptedModel {
		return &scriptedModel{info: info, script: script, ws: s.ws, settle: run.settle, gate: gate, paced: s.rec.Settings.PacedModel, hydrate: hydrates(s.rec)}
	}
	base := driverConfig{rec: s.rec, system: notModelledSystem, stack: st, ws: s.ws, gate: gate}
	if run.family != nil {
		f := run.family
		f.base, f.config, f.info, f.newMod = ctx, base, info, newModel
		f.hooks, f.onDriver = run.fixture.childHooks, run.register
	}
	if err := openingEvents(s.rec, s.log); err != nil {
		st.Close()
		return nil, err
	}
	if err := run.fixture.seed(st, s.logDir, s.log.Header()); err != nil {
		st.Close()
		return nil, err
	}
	run.model = newModel(s.script)
	rc := base
	rc.model, rc.surface, rc.wire, rc.hooks, rc.titleReplies = run.model, st, s.wire, goalRounds(roundDriven(s.rec, st), run.fixture.rootHooks()), s.script.Title
	steers := newWebSteers(s.rec)
	if steers != nil {
		rc.hooks.stepEnded = steers.stepEnded
	}
	rc.resumed = s.rec.Settings.ResumeSeed > 0
	root, err := newDriver(ctx, rc)
	if err != nil {
		st.Close()
		return nil, err
	}
	run.root = root
	if run.family != nil {
		run.family.root = root
	}
	run.fixture.root = func() *driver { return root }
	run.register(root)
	st.AttachLoop(root)
	// The session is published: its SessionStart hooks run detached, their
	// context entered at its next step (upstream's agent.inject).
	st.SessionStarted(stack.SourceStartup, func(cm pipeline.ContextMessage) { root.inbox.add(nextStep, pluginMessage(cm)) })
	run.client = &client{rec: s.rec, root: root, stack: st, wire: s.wire, ws: s.ws, family: run.family, steers: steers}
	return run, nil
}

// openingEvents writes what the session's log holds before its first
// prompt: a resumed session's seed and resume ([resumeSeeded]), else the
// events it was created with ([creationEvents]).
func openingEvents(rec *recording.Recording, log *session.Log) error {
	if rec.Settings.ResumeSeed > 0 {
		return resumeSeeded(rec, log)
	}
	return creationEvents(rec, log)
}

// creationEvents writes the events the recorded session was created with
// (before its first inbox splice): a permission/preset, sandbox/mode or
// approval/policy a session starts with, as a deployment that opens a
// session under an explicit override writes them (upstream's product CLI
// with DSH_PERMISSION_MODE writes all three).
func creationEvents(rec *recording.Recording, log *session.Log) error {
	for _, e := range rec.Events {
		if e.Type != session.KindSandboxMode && e.Type != session.KindApprovalPolicy && e.Type != session.KindPermissionPreset {
			return nil
		}
		if _, err := log.Append(e.Type, json.RawMessage(e.Data)); err != nil {
			return err
		}
	}
	return nil
}

// register makes d a destination of its session's job notices.
func (r *sessionRun) register(d *driver) {
	r.mu.Lock()
	r.drivers[d.log.ID()] = d
	r.mu.Unlock()
}

// deliver hands a job's completion notice to its owner's next-step inbox.
func (r *sessionRun) deliver(n jobs.Notice) {
	r.mu.Lock()
	d := r.drivers[n.Owner]
	if d == nil {
		d = r.root
	}
	r.mu.Unlock()
	if d != nil {
		d.inbox.deliver(n.Text, n.Summary, n.SpawnFailed)
	}
}

// close stops the children's loops and the session's, then the stack.
func (r *sessionRun) close() {
	if r.family != nil {
		r.family.close()
	}
	if r.root != nil {
		r.root.Cancel(false)
		r.root.Close()
	}
	r.stack.Close()
}

// flags are the problems of every agent of the session and of its client.
func (r *sessionRun) flags() []string {
	flags, _ := r.root.problems()
	if r.family != nil {
		for _, m := range r.family.all() {
			if m.driver != nil {
				f, _ := m.driver.problems()
				flags = append(flags, f...)
			}
		}
	}
	r.client.mu.Lock()
	flags = append(flags, r.client.flags...)
	r.client.mu.Unlock()
	return flags
}

// unconsumed describes the replies never requested, per script.
func (r *sessionRun) unconsumed(rec *recording.Recording, script *recording.Script) []string {
	var out []string
	if n := r.model.unconsumed(); n > 0 {
		out = append(out, fmt.Sprintf("unconsumed replies: %d of %d model replies were never requested", n, len(script.Replies)))
	}
	if r.family == nil {
		return out
	}
	for _, c := range rec.Children {
		r.family.mu.Lock()
		sm := r.family.models[c.Index]
		r.family.mu.Unlock()
		left := len(c.Script.Replies)
		if sm != nil {
			left = sm.unconsumed()
		}
		if left > 0 {
			out = append(out, fmt.Sprintf("%s: unconsumed replies: %d of %d model replies were never requested", c.File, left, len(c.Script.Replies)))
		}
	}
	return out
}
