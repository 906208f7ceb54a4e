package replay

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/dshsim/dshsim/harness/replay/instructions"
	"github.com/dshsim/dshsim/harness/replay/recording"
	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/pipeline/session"
)

// instructionsKind is the source kind of a workspace-instructions message.
const instructionsKind = "agent-instructions"

// instructionsPlugin is upstream's agent-instructions plugin in the agent
// loop: the files a step's file tools touched (successful read, write,
// edit; a run_code program's nested ones with its result) are projected
// once the step ended, each into the next-step inbox (inserted, or
// replacing the pending projection); at the next pre-step the pending
// projection is removed (outcome canceled) and entered directly after the
// claimed messages, and the baseline enters with the first step.
type instructionsPlugin struct {
	d       *driver
	loader  *instructions.Loader
	touches []string // this step's touched paths
	queued  []string // paths projected at the next pre-step
}

// newInstructions composes the workspace instructions of the recording's
// settings (on by default, as the default profile's workspaceContext; nil
// when maxBytes is 0).
func newInstructions(d *driver, set *recording.WorkspaceContext) *instructionsPlugin {
	cfg := instructions.Config{Cwd: d.ws, DshHome: filepath.Join(d.ws, ".dsh"), MaxBytes: instructions.DefaultMaxBytes}
	if set != nil {
		cfg.ProjectRootMarkers = set.ProjectRootMarkers
		if set.MaxBytes != nil {
			cfg.MaxBytes = *set.MaxBytes
		}
	}
	if cfg.MaxBytes == 0 {
		return nil
	}
	return &instructionsPlugin{d: d, loader: instructions.New(cfg)}
}

// toolResult notes the file a successful call touched (nested calls of a
// run_code program count with it, from its dispatch events).
func (p *instructionsPlugin) toolResult(tc recording.ToolCall, r pipeline.Result) {
	if tc.Name == "run_code" {
		p.touches = append(p.touches, p.nestedTouches(tc.ID)...)
	}
	if !r.IsError {
		if path, ok := touchedPath(tc.Name, json.RawMessage(tc.Arguments)); ok {
			p.touches = append(p.touches, path)
		}
	}
}

// touchedPath is a file tool call's trimmed file_path.
func touchedPath(name string, args json.RawMessage) (string, bool) {
	if name != "read" && name != "write" && name != "edit" {
		return "", false
	}
	var a struct {
		FilePath *string `json:"file_path"`
	}
	if json.Unmarshal(args, &a) != nil || a.FilePath == nil {
		return "", false
	}
	path := strings.TrimSpace(*a.FilePath)
	return path, path != ""
}

// nestedTouches are the files a run_code program's successful nested file
// calls touched, in the order they settled.
func (p *instructionsPlugin) nestedTouches(root string) []string {
	events, err := p.d.log.Events()
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range events {
		if e.Type != session.KindCodeDispatch {
			continue
		}
		var d struct {
			RootCallID string          `json:"rootCallId"`
			Name       string          `json:"name"`
			Arguments  json.RawMessage `json:"arguments"`
			IsError    bool            `json:"isError"`
		}
		if json.Unmarshal(e.Data, &d) != nil || d.RootCallID != root || d.IsError {
			continue
		}
		if path, ok := touchedPath(d.Name, d.Arguments); ok {
			out = append(out, path)
		}
	}
	return out
}

// stepEnded queues the step's touches for projection.
func (p *instructionsPlugin) stepEnded() {
	p.queued = append(p.queued, p.touches...)
	p.touches = nil
}

// preStep is the plugin's pre-step listener: after the inner listeners it
// runs the queued projections, then (on a step that runs) removes the
// pending instructions message and enters the one the session needs right
// after the claimed messages; a rejected turn or an empty first step only
// brings the inbox up to date.
func (p *instructionsPlugin) preStep(ctx context.Context, ps *preStepInfo, next func() (stepDecision, error)) (stepDecision, error) {
	dec, err := next()
	if err != nil {
		return dec, err
	}
	if err := p.project(); err != nil {
		return dec, err
	}
	pending := p.pending()
	desired, err := p.compose(ps.claimed, pending, nil)
	if err != nil {
		return dec, err
	}
	if dec.stands() || (ps.step == 1 && len(dec.messages) == 0) {
		return dec, p.sync(ps.claimed, desired)
	}
	for _, m := range pending {
		if _, err := p.d.inbox.remove(m.ID); err != nil {
			return dec, err
		}
	}
	if desired == nil || slices.ContainsFunc(dec.messages, func(m userMessage) bool { return sameInstructions(m, *desired) }) {
		return dec, nil
	}
	last := -1
	for i, m := range dec.messages {
		if slices.ContainsFunc(ps.claimed, func(c userMessage) bool { return c.ID == m.ID }) {
			last = i
		}
	}
	dec.messages = slices.Insert(dec.messages, last+1, *desired)
	return dec, nil
}

// project runs the queued projections, one per touched path, in order.
func (p *instructionsPlugin) project() error {
	queued := p.queued
	p.queued = nil
	for _, path := range queued {
		desired, err := p.compose(nil, p.pending(), []string{path})
		if err != nil {
			return err
		}
		if err := p.sync(nil, desired); err != nil {
			return err
		}
	}
	return nil
}

// compose asks the loader for the message the session needs; a pending
// message it returns as it is keeps its id.
func (p *instructionsPlugin) compose(claimed, pending []userMessage, touched []string) (*userMessage, error) {
	visible, err := p.visible()
	if err != nil {
		return nil, err
	}
	m, err := p.loader.Compose(instructions.Composition{Visible: visible, Claimed: asInstructions(claimed), Pending: asInstructions(pending), Touched: touched})
	if err != nil || m == nil {
		return nil, err
	}
	for _, pm := range pending {
		if sameInstructions(pm, enteredMessage(instructionsKind, m.Source, textBlocks(m.Texts), "")) {
			return &pm, nil
		}
	}
	msg := newUserMessage(instructionsKind, m.Source, textBlocks(m.Texts))
	return &msg, nil
}

// sync brings the pending instructions message in the inbox up to date:
// none when nothing is needed or the session already has it, the pending
// one when it is the same, else desired (replacing the first pending one).
func (p *instructionsPlugin) sync(claimed []userMessage, desired *userMessage) error {
	pending := p.pending()
	supplied := false
	if desired != nil {
		supplied = slices.ContainsFunc(claimed, func(m userMessage) bool { return sameInstructions(m, *desired) })
		if !supplied {
			visible, err := p.visibleMessages()
			if err != nil {
				return err
			}
			supplied = slices.ContainsFunc(visible, func(m userMessage) bool { return sameInstructions(m, *desired) })
		}
	}
	keep := -1
	switch {
	case desired == nil || supplied:
	case slices.ContainsFunc(pending, func(m userMessage) bool { return sameInstructions(m, *desired) }):
		keep = slices.IndexFunc(pending, func(m userMessage) bool { return sameInstructions(m, *desired) })
	case len(pending) == 0:
		return p.d.inbox.prepend(nextStep, *desired)
	default:
		if _, err := p.d.inbox.replace(pending[0].ID, *desired); err != nil {
			return err
		}
		pending, keep = pending[1:], -2
	}
	for i, m := range pending {
		if i != keep {
			if _, err := p.d.inbox.remove(m.ID); err != nil {
				return err
			}
		}
	}
	return nil
}

// pending are the instructions messages waiting in the next-step inbox.
func (p *instructionsPlugin) pending() []userMessage {
	var out []userMessage
	for _, m := range p.d.inbox.pending(nextStep) {
		if m.kind == instructionsKind {
			out = append(out, m)
		}
	}
	return out
}

// visible are the instructions messages on the session's surface.
func (p *instructionsPlugin) visible() ([]instructions.Message, error) {
	msgs, err := p.visibleMessages()
	return asInstructions(msgs), err
}

// visibleMessages are the user messages on the surface of our log (an
// event appended to the surface, and not replaced by a later one's
// surfaceOp), instructions or not, in log order.
func (p *instructionsPlugin) visibleMessages() ([]userMessage, error) {
	events, err := p.d.log.Events()
	if err != nil {
		return nil, fmt.Errorf("workspace instructions: read our log: %w", err)
	}
	return surfaceMessages(events), nil
}

// surfaceEvents folds the events' surface ops (append adds the event;
// {op: replace, start, end} removes the events start..end and adds it) and
// returns the events left on the surface, in log order.
func surfaceEvents(events []session.Event) []session.Event {
	var surface []session.Event
	for _, e := range events {
		if len(e.SurfaceOp) == 0 {
			continue
		}
		var op surfaceReplace
		if json.Unmarshal(e.SurfaceOp, &op) == nil && op.Op == "replace" {
			surface = slices.DeleteFunc(surface, func(s session.Event) bool { return s.Seq >= op.Start && s.Seq <= op.End })
		}
		surface = append(surface, e)
	}
	return surface
}

// surfaceReplace is a surfaceOp that replaces the events start..end.
type surfaceReplace struct {
	Op    string `json:"op"`
	Start int64  `json:"start"`
	End   int64  `json:"end"`
}

// surfaceMessages are the user messages on the surface.
func surfaceMessages(events []session.Event) []userMessage {
	var out []userMessage
	for _, e := range surfaceEvents(events) {
		if e.Type != session.KindUserMessage {
			continue
		}
		var m struct {
			Content []pipeline.Block    `json:"content"`
			Source  instructions.Source `json:"source"`
			ID      string              `json:"id"`
		}
		if json.Unmarshal(e.Data, &m) == nil {
			out = append(out, userMessage{UserMessage: pipeline.UserMessage[any]{Content: m.Content, Source: m.Source, ID: m.ID}, kind: m.Source.Kind})
		}
	}
	return out
}

// asInstructions are the instructions messages among msgs.
func asInstructions(msgs []userMessage) []instructions.Message {
	var out []instructions.Message
	for _, m := range msgs {
		if src, ok := m.Source.(instructions.Source); ok && m.kind == instructionsKind {
			out = append(out, instructions.Message{Texts: texts(m.Content), Source: src})
		}
	}
	return out
}

// sameInstructions reports two instructions messages with the same text
// and source (ids aside).
func sameInstructions(a, b userMessage) bool {
	if a.kind != instructionsKind || b.kind != instructionsKind {
		return false
	}
	as, _ := json.Marshal(a.Source)
	bs, _ := json.Marshal(b.Source)
	return slices.Equal(texts(a.Content), texts(b.Content)) && string(as) == string(bs)
}

func texts(content []pipeline.Block) []string {
	out := make([]string, len(content))
	for i, b := range content {
		out[i] = b.Text
	}
	return out
}

func textBlocks(ts []string) []pipeline.Block {
	out := make([]pipeline.Block, len(ts))
	for i, t := range ts {
		out[i] = pipeline.TextBlock(t)
	}
	return out
}

// compaction fixture texts (VERBATIM, upstream's fixture).
const (
	compactionText = "Earlier context was compacted for this snapshot."
	compactionID   = "workspace-context-fixture"
)

// compactionSource is the fixture's compaction message source.
type compactionSource struct {
	Kind         string `json:"kind"`
	Plugin       string `json:"plugin"`
	CompactionID string `json:"compactionId"`
}

// compactAt is upstream's compaction fixture (workspaceContext
// compactBaselineAtRead): before the first read of that path runs, the
// visible baseline instructions message is replaced by the fixture's
// compaction message, so the next projection enters the baseline again.
func (d *driver) compactAt(tc recording.ToolCall) error {
	set := d.rec.Settings.WorkspaceContext
	if set == nil || set.CompactBaselineAtRead == "" || d.compacted || tc.Name != "read" {
		return nil
	}
	if path, ok := touchedPath(tc.Name, json.RawMessage(tc.Arguments)); !ok || filepath.Clean(path) != filepath.Clean(set.CompactBaselineAtRead) {
		return nil
	}
	events, err := d.log.Events()
	if err != nil {
		return err
	}
	var baseline int64 = -1
	for _, m := range surfaceEvents(events) {
		var data struct {
			Source instructions.Source `json:"source"`
		}
		if m.Type == session.KindUserMessage && json.Unmarshal(m.Data, &data) == nil && data.Source.Kind == instructionsKind && data.Source.Baseline {
			baseline = m.Seq
		}
	}
	if baseline < 0 {
		return nil
	}
	d.compacted = true
	msg := newUserMessage("plugin", compactionSource{Kind: "plugin", Plugin: "compact", CompactionID: compactionID}, []pipeline.Block{pipeline.TextBlock(compactionText)})
	_, err = d.appendWith(session.KindUserMessage, msg, session.AppendOptions{SourceEventSeqs: []int64{baseline},
		SurfaceOp: surfaceReplace{Op: "replace", Start: baseline, End: baseline}})
	return err
}
