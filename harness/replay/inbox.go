package replay

import (
	"slices"
	"sync"

	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/pipeline/session"
)

// Inbox targets (VERBATIM): a prompt waits for a turn of its own, everything
// else (job notices, tool-result contexts, steering) for the next step.
const (
	nextTurn = "next-turn"
	nextStep = "next-step"
)

// noticeSource is the source of a job's completion notice (VERBATIM shape).
type noticeSource struct {
	Kind    string `json:"kind"`
	Plugin  string `json:"plugin"`
	Form    string `json:"form"`
	Summary string `json:"summary"`
}

// pluginSource is the source of a plugin's context message (a hook's, a
// reminder's with its form and summary).
type pluginSource struct {
	Kind    string `json:"kind"`
	Plugin  string `json:"plugin"`
	Form    string `json:"form,omitempty"`
	Summary string `json:"summary,omitempty"`
}

// pluginMessage is a plugin's context message as upstream stores it: one
// text block per text, or its own blocks.
func pluginMessage(cm pipeline.ContextMessage) userMessage {
	content := make([]pipeline.Block, len(cm.Texts))
	for i, t := range cm.Texts {
		content[i] = pipeline.TextBlock(t)
	}
	if cm.Content != nil {
		content = append([]pipeline.Block(nil), cm.Content...)
	}
	return newUserMessage("plugin", pluginSource{Kind: "plugin", Plugin: cm.Plugin, Form: cm.Form, Summary: cm.Summary}, content)
}

// inbox is the agent's pending input, upstream's two lists: next-turn (the
// prompts, one per turn) and next-step (job notices, tool-result contexts,
// steering, projected instructions), every change logged as an
// agent/inbox/spliced event. A step's claim takes the whole next-step list
// and, at a turn's first step, one prompt; a removal by a plugin is logged
// with outcome canceled. A job's notice is spliced in when its job settles;
// a runner that never started is learnt of asynchronously upstream, after
// the step that started the job ended and its claim ran: such a notice
// ("late") is spliced in after that claim, so it waits a whole step, as
// upstream's recording missing-sandbox-runner shows.
type inbox struct {
	mu    sync.Mutex
	log   appender
	lists map[string][]userMessage
	late  []userMessage // held until after the current step's claim
	err   error         // the first failed append of a delivery
}

type appender interface {
	append(kind string, data any) error
}

func newInbox(log appender) *inbox {
	return &inbox{log: log, lists: map[string][]userMessage{nextTurn: nil, nextStep: nil}}
}

// deliver receives one notice (from a job's goroutine).
func (in *inbox) deliver(text, summary string, late bool) {
	m := newUserMessage("plugin", noticeSource{Kind: "plugin", Plugin: "tool-jobs", Form: "notice", Summary: summary},
		[]pipeline.Block{pipeline.TextBlock(text)})
	in.mu.Lock()
	defer in.mu.Unlock()
	if late {
		in.late = append(in.late, m)
		return
	}
	if err := in.spliceLocked(nextStep, len(in.lists[nextStep]), 0, []userMessage{m}, false); err != nil && in.err == nil {
		in.err = err
	}
}

// stage splices a tool result's context messages (a hook's
// additionalContext, a reminder) into the next-step list right after its
// tool/result, each as upstream's plugin user message.
func (in *inbox) stage(msgs []pipeline.ContextMessage) error {
	for _, cm := range msgs {
		if err := in.add(nextStep, pluginMessage(cm)); err != nil {
			return err
		}
	}
	return in.firstErr()
}

// add appends m to target (a prompt queued, a steering message).
func (in *inbox) add(target string, m userMessage) error {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.spliceLocked(target, len(in.lists[target]), 0, []userMessage{m}, false)
}

// prepend puts m first in target.
func (in *inbox) prepend(target string, m userMessage) error {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.spliceLocked(target, 0, 0, []userMessage{m}, false)
}

// remove cancels the pending message id (outcome canceled); false when it
// is no longer pending.
func (in *inbox) remove(id string) (bool, error) {
	in.mu.Lock()
	defer in.mu.Unlock()
	for _, target := range []string{nextTurn, nextStep} {
		if i := slices.IndexFunc(in.lists[target], func(m userMessage) bool { return m.ID == id }); i >= 0 {
			return true, in.spliceLocked(target, i, 1, nil, true)
		}
	}
	return false, nil
}

// replace swaps the pending message id for m in place (a removal of the
// old one, outcome canceled, and the insertion of m in one splice).
func (in *inbox) replace(id string, m userMessage) (bool, error) {
	in.mu.Lock()
	defer in.mu.Unlock()
	for _, target := range []string{nextTurn, nextStep} {
		if i := slices.IndexFunc(in.lists[target], func(p userMessage) bool { return p.ID == id }); i >= 0 {
			return true, in.spliceLocked(target, i, 1, []userMessage{m}, true)
		}
	}
	return false, nil
}

// claim takes a step's input: the whole next-step list, then, when target
// is next-turn (a turn's first step), one prompt; each non-empty part is one
// splice, without outcome. The late notices are spliced in after it.
func (in *inbox) claim(target string) ([]userMessage, error) {
	in.mu.Lock()
	defer in.mu.Unlock()
	claimed := slices.Clone(in.lists[nextStep])
	if err := in.spliceLocked(nextStep, 0, len(claimed), nil, false); err != nil {
		return nil, err
	}
	if target == nextTurn && len(in.lists[nextTurn]) > 0 {
		claimed = append(claimed, in.lists[nextTurn][0])
		if err := in.spliceLocked(nextTurn, 0, 1, nil, false); err != nil {
			return nil, err
		}
	}
	for _, m := range in.late {
		if err := in.spliceLocked(nextStep, len(in.lists[nextStep]), 0, []userMessage{m}, false); err != nil {
			return nil, err
		}
	}
	in.late = nil
	return claimed, in.err
}

// drop forgets target's pending messages without a splice (a disposed
// agent's queued turns go with it).
func (in *inbox) drop(target string) {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.lists[target] = nil
}

// pending returns a copy of target's list.
func (in *inbox) pending(target string) []userMessage {
	in.mu.Lock()
	defer in.mu.Unlock()
	return slices.Clone(in.lists[target])
}

// hasPending reports whether either list holds a message (upstream then
// opens another turn right after turn/end).
func (in *inbox) hasPending() bool {
	in.mu.Lock()
	defer in.mu.Unlock()
	return len(in.lists[nextTurn]) > 0 || len(in.lists[nextStep]) > 0
}

func (in *inbox) firstErr() error {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.err
}

// spliceLocked applies one splice of target, logging it (nothing happens
// and nothing is logged when it neither removes nor inserts).
func (in *inbox) spliceLocked(target string, start, removed int, inserted []userMessage, canceled bool) error {
	if removed == 0 && len(inserted) == 0 {
		return nil
	}
	s := splice{Target: target, Start: start, Inserted: inserted}
	if s.Inserted == nil {
		s.Inserted = []userMessage{}
	}
	if removed > 0 {
		s.RemovedCount = &removed
		if canceled {
			s.Outcome = "canceled"
		}
	}
	if err := in.log.append(session.KindInboxSpliced, s); err != nil {
		return err
	}
	in.lists[target] = slices.Concat(in.lists[target][:start], inserted, in.lists[target][start+removed:])
	return nil
}
