package compaction

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/dshsim/dshsim/internal/jsjson"
	"github.com/dshsim/dshsim/pipeline/session"
)

// Node is one node of the model-visible surface: the seq of the event
// that placed it and its price.
type Node struct {
	Seq    int64
	Tokens int
}

// Surface is a session's model-visible surface, folded from its log as
// upstream's session and token meter fold it: every user/message,
// assistant/message and tool/result carrying a surfaceOp, appended at the
// tail ("append") or replacing a range of current nodes ({op: replace,
// start, end}).
type Surface struct {
	// Nodes are the current nodes in model-visible order.
	Nodes []Node
	// Tokens is the nodes' total price.
	Tokens int
	// Replacements counts the replacements folded (upstream's
	// replaceGeneration).
	Replacements int
	// deltas are each node's open tool calls (an assistant message's
	// calls, -1 for a tool result).
	deltas []int
}

// replaceOp is a surfaceOp that replaces a range.
type replaceOp struct {
	Op    string `json:"op"`
	Start int64  `json:"start"`
	End   int64  `json:"end"`
}

// surfaceKinds are the event types that can join the surface.
var surfaceKinds = []string{session.KindUserMessage, session.KindAssistantMessage, session.KindToolResult}

// Fold folds events into their surface. A replacement naming nodes that
// are not current, a surfaceOp of another shape, one on an event that
// cannot join the surface, or an event whose message cannot be priced,
// is an error naming its seq.
func Fold(events []session.Event) (*Surface, error) {
	s := &Surface{}
	for _, e := range events {
		if !slices.Contains(surfaceKinds, e.Type) {
			if len(e.SurfaceOp) != 0 {
				return nil, fmt.Errorf("seq %d (%s): surfaceOp: the event is not surface-eligible and cannot carry one", e.Seq, e.Type)
			}
			continue
		}
		if len(e.SurfaceOp) == 0 {
			continue
		}
		if err := s.fold(e); err != nil {
			return nil, fmt.Errorf("seq %d (%s): %w", e.Seq, e.Type, err)
		}
	}
	return s, nil
}

func (s *Surface) fold(e session.Event) error {
	content, delta, err := messageOf(e)
	if err != nil {
		return err
	}
	tokens := 0
	if content != nil {
		if tokens, err = EstimateMessage(content); err != nil {
			return err
		}
	}
	var op replaceOp
	if string(e.SurfaceOp) == `"append"` {
		s.Nodes, s.deltas = append(s.Nodes, Node{Seq: e.Seq, Tokens: tokens}), append(s.deltas, delta)
		s.Tokens += tokens
		return nil
	}
	if !replaceShape(e.SurfaceOp, &op) {
		return fmt.Errorf("surfaceOp: want \"append\" or {op: \"replace\", start, end} (exactly these keys, seqs non-negative integers), got %s", e.SurfaceOp)
	}
	i, j := s.Index(op.Start), s.Index(op.End)
	if i < 0 || j < 0 || i > j {
		return fmt.Errorf("surfaceOp: replace has invalid current range %d-%d", op.Start, op.End)
	}
	for _, n := range s.Nodes[i : j+1] {
		s.Tokens -= n.Tokens
	}
	s.Nodes = slices.Replace(s.Nodes, i, j+1, Node{Seq: e.Seq, Tokens: tokens})
	s.deltas = slices.Replace(s.deltas, i, j+1, delta)
	s.Tokens += tokens
	s.Replacements++
	return nil
}

// replaceShape decodes a replacing surfaceOp into op: an object of
// exactly op "replace", start and end, both non-negative integers, as
// upstream's session accepts it. Pure.
func replaceShape(raw json.RawMessage, op *replaceOp) bool {
	var keys map[string]json.RawMessage
	if json.Unmarshal(raw, &keys) != nil || len(keys) != 3 || json.Unmarshal(raw, op) != nil {
		return false
	}
	_, hasStart := keys["start"]
	_, hasEnd := keys["end"]
	return hasStart && hasEnd && op.Op == "replace" && op.Start >= 0 && op.End >= 0
}

// messageOf is the content of the message an event places (nil: an
// assistant message without content, which places a node priced 0) and
// the tool calls it opens.
func messageOf(e session.Event) (*jsjson.Value, int, error) {
	d, err := jsjson.Parse(e.Data)
	if err != nil || d.Kind != jsjson.Object {
		return nil, 0, fmt.Errorf("data: want an object")
	}
	msg := d
	if e.Type != session.KindUserMessage {
		if msg = d.Get("message"); msg == nil || msg.Kind != jsjson.Object {
			return nil, 0, fmt.Errorf("data.message: want an object")
		}
	}
	content := msg.Get("content")
	if content == nil || content.Kind != jsjson.Array {
		return nil, 0, fmt.Errorf("content: want an array")
	}
	switch e.Type {
	case session.KindToolResult:
		return content, -1, nil
	case session.KindAssistantMessage:
		calls := 0
		for _, b := range content.Elems {
			if b.Get("type").Str() == "tool-call" {
				calls++
			}
		}
		if len(content.Elems) == 0 {
			return nil, 0, nil
		}
		return content, calls, nil
	}
	return content, 0, nil
}

// Index is the position of the node placed by seq (-1: none).
func (s *Surface) Index(seq int64) int {
	return slices.IndexFunc(s.Nodes, func(n Node) bool { return n.Seq == seq })
}

// Seqs are the nodes' seqs, in order.
func (s *Surface) Seqs() []int64 {
	out := make([]int64, len(s.Nodes))
	for i, n := range s.Nodes {
		out[i] = n.Seq
	}
	return out
}

// balancedCuts says, for each cut between nodes (len(Nodes)+1 of them),
// whether every tool call before it has its result before it. A result
// with no open call is an error naming its seq (a corrupt surface).
func (s *Surface) balancedCuts() ([]bool, error) {
	cuts := make([]bool, 0, len(s.Nodes)+1)
	cuts = append(cuts, true)
	open := 0
	for i, d := range s.deltas {
		open += d
		if open < 0 {
			return nil, fmt.Errorf("tool-pairing balance: tool/result at surface seq %d has no matching tool-call (corrupt surface)", s.Nodes[i].Seq)
		}
		cuts = append(cuts, open == 0)
	}
	return cuts, nil
}
