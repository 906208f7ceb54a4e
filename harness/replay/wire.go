package replay

import (
	"path/filepath"
	"sync"

	"github.com/dshsim/dshsim/harness/replay/acpwire"
)

// bridge is upstream's ACP bridge as the client sees it: every frame the
// agent sends, in order. Each committed assistant text block is one
// agent_message_chunk as the message is logged; a prompt is answered once
// the agent is idle (its inbox drained: queued prompts and notices run as
// further turns first), with its own turn's end (max-tokens answers
// end_turn), except a failed turn, answered with the JSON-RPC error at its
// turn/end, and a cancelled one (cancelled).
type bridge struct {
	mu       sync.Mutex
	frames   []acpwire.Frame
	inflight *inflight
	// imagePrompts advertises inline image prompts in initialize (a
	// deployment with an attachment store and an image model).
	imagePrompts bool
}

// inflight is the prompt awaiting its answer.
type inflight struct {
	msgID     string
	turn      int            // the turn that claimed it (0: not yet)
	end       map[string]any // that turn's end reason
	cancelled bool
	failed    bool // answered with an error at turn/end
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
	b.inflight = &inflight{msgID: id}
	return b.inflight
}

// claimed notes the turn that claimed the prompt's message.
func (b *bridge) claimed(msgs []userMessage, turn int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.inflight == nil {
		return
	}
	for _, m := range msgs {
		if m.ID == b.inflight.msgID {
			b.inflight.turn = turn
		}
	}
}

// assistantMessage sends one chunk per non-empty text block.
func (b *bridge) assistantMessage(blocks []map[string]any) {
	for _, blk := range blocks {
		if t, _ := blk["text"].(string); blk["type"] == "text" && t != "" {
			b.send(acpwire.AgentText(t))
		}
	}
}

// turnEnded records the prompt's turn's end; a failed turn answers the
// prompt now, with the failure's message.
func (b *bridge) turnEnded(turn int, reason map[string]any) {
	b.mu.Lock()
	p := b.inflight
	b.mu.Unlock()
	if p == nil || p.turn != turn {
		return
	}
	if reason["kind"] == "error" {
		msg := ""
		if e, ok := reason["error"].(map[string]any); ok {
			msg, _ = e["message"].(string)
		}
		p.failed = true
		b.send(acpwire.Failed(msg))
		return
	}
	p.end = reason
}

// idle answers the prompt once the agent is idle (nothing when it was
// answered at its turn's end, or no prompt waits).
func (b *bridge) idle() {
	b.mu.Lock()
	p := b.inflight
	b.inflight = nil
	b.mu.Unlock()
	if p == nil || p.failed {
		return
	}
	b.send(acpwire.Stop(stopReason(p)))
}

// stopReason is the answer of a prompt that did not fail: cancelled when the
// user cancelled it (or its turn never ended), else its turn's end mapped
// as upstream's bridge maps it (max-tokens, blocked, aborted: end_turn).
func stopReason(p *inflight) string {
	if p.cancelled || p.end == nil {
		return "cancelled"
	}
	if p.end["kind"] == "interrupted" {
		return "cancelled"
	}
	return "end_turn"
}
