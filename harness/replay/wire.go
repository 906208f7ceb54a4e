package replay

import (
	"path/filepath"
	"strings"
	"sync"

	"github.com/dshsim/dshsim/harness/replay/acpwire"
	"github.com/dshsim/dshsim/llm"
	"github.com/dshsim/dshsim/pipeline/session"
)

// agentWire is what an agent's loop tells its client: the session's
// bridge, or nothing (a child has no client).
type agentWire interface {
	claimed(msgs []userMessage, turn int)
	assistantMessage(blocks []replyBlock)
	turnEnded(turn int, reason session.EndReason)
	idle()
}

// noWire is a child's: upstream's children have no client.
type noWire struct{}

func (noWire) claimed([]userMessage, int)       {}
func (noWire) assistantMessage([]replyBlock)    {}
func (noWire) turnEnded(int, session.EndReason) {}
func (noWire) idle()                            {}

// bridge is upstream's ACP bridge as the client sees it: every frame the
// agent sends, in order. Each committed assistant text block is one
// agent_message_chunk as the message is logged; a prompt is answered once
// the agent is idle (its inbox drained: queued prompts and notices run as
// further turns first; no maintenance task running), with its own turn's
// end (max-tokens answers end_turn), except a failed turn, answered with
// the JSON-RPC error at its turn/end, and a cancelled one (cancelled). A
// prompt may be sent before the last one was answered
// (promptAndWaitForAgentMessage): each waits for its own answer.
type bridge struct {
	mu       sync.Mutex
	frames   []acpwire.Frame
	inflight []*inflight // in the order they were sent
	// imagePrompts advertises inline image prompts in initialize (a
	// deployment with an attachment store and an image model).
	imagePrompts bool
}

// inflight is a prompt awaiting its answer.
type inflight struct {
	msgID     string
	turn      int                // the turn that claimed it (0: not yet)
	end       *session.EndReason // that turn's end reason
	cancelled bool               // the user cancelled it
	failed    bool               // answered with an error at turn/end
	answered  chan struct{}      // closed once its answer is sent
}

func (b *bridge) send(f acpwire.Frame) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.frames = append(b.frames, f)
}

func (b *bridge) sent() []acpwire.Frame {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]acpwire.Frame(nil), b.frames...)
}

// initialize answers the handshake.
func (b *bridge) initialize() { b.send(acpwire.Initialized(b.imagePrompts)) }

// newSession answers session/new for the session cwd: upstream's checks in
// order (an absolute cwd, no additional directories, no MCP servers), each
// an invalid-params error; ok reports a session was created.
func (b *bridge) newSession(cwd string, additionalDirectories []string) (ok bool) {
	switch {
	case !filepath.IsAbs(cwd):
		b.send(acpwire.InvalidParams("cwd must be an absolute path: " + cwd))
	case len(additionalDirectories) > 0:
		b.send(acpwire.InvalidParams("additionalDirectories is not supported"))
	default:
		b.send(acpwire.SessionCreated())
		return true
	}
	return false
}

// prompt starts waiting for the answer of the prompt message id.
func (b *bridge) prompt(id string) *inflight {
	b.mu.Lock()
	defer b.mu.Unlock()
	p := &inflight{msgID: id, answered: make(chan struct{})}
	b.inflight = append(b.inflight, p)
	return p
}

// claimed notes the turn that claimed a prompt's message.
func (b *bridge) claimed(msgs []userMessage, turn int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, p := range b.inflight {
		for _, m := range msgs {
			if m.ID == p.msgID {
				p.turn = turn
			}
		}
	}
}

// started reports whether a turn claimed p.
func (b *bridge) started(p *inflight) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return p.turn != 0
}

// cancel marks p cancelled by the user; false when it was answered.
func (b *bridge) cancel(p *inflight) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if closed(p.answered) {
		return false
	}
	p.cancelled = true
	return true
}

// assistantMessage sends one chunk per non-empty text block.
func (b *bridge) assistantMessage(blocks []replyBlock) {
	for _, blk := range blocks {
		if blk.Type == llm.Text && blk.Text != "" {
			b.send(acpwire.AgentText(blk.Text))
		}
	}
}

// turnEnded records the end of the turn that claimed a prompt; a failed
// turn answers the prompt now, with the failure's message.
func (b *bridge) turnEnded(turn int, reason session.EndReason) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, p := range b.inflight {
		if p.turn != turn || closed(p.answered) {
			continue
		}
		if reason.Failed() {
			msg := ""
			if reason.Error != nil {
				msg = reason.Error.Message
			}
			p.failed = true
			b.frames = append(b.frames, acpwire.Failed(msg))
			close(p.answered)
			continue
		}
		p.end = &reason
	}
}

// idle answers, in order, every prompt whose turn ended (or that the user
// cancelled): the agent is idle.
func (b *bridge) idle() {
	b.mu.Lock()
	defer b.mu.Unlock()
	var left []*inflight
	for _, p := range b.inflight {
		switch {
		case closed(p.answered):
		case p.end != nil || p.cancelled:
			b.frames = append(b.frames, acpwire.Stop(stopReason(p)))
			close(p.answered)
		default:
			left = append(left, p)
		}
	}
	b.inflight = left
}

// textSince reports whether an assistant text frame sent after the first
// mark frames holds text.
func (b *bridge) textSince(mark int, text string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, f := range b.frames[min(mark, len(b.frames)):] {
		if f.Kind == acpwire.MessageChunk && strings.Contains(f.Text(), text) {
			return true
		}
	}
	return false
}

// stopReason is the answer of a prompt that did not fail: cancelled when the
// user cancelled it (or its turn never ended), else its turn's end mapped
// as upstream's bridge maps it (max-tokens, blocked, aborted: end_turn).
func stopReason(p *inflight) string {
	if p.cancelled || p.end == nil {
		return "cancelled"
	}
	if p.end.Kind == session.EndInterrupted {
		return "cancelled"
	}
	return "end_turn"
}

// closed reports whether ch is closed.
func closed(ch chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}
