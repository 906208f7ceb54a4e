package replay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/dshsim/dshsim/compaction"
	"github.com/dshsim/dshsim/harness/replay/recording"
	"github.com/dshsim/dshsim/llm"
	"github.com/dshsim/dshsim/llm/deepseek"
	"github.com/dshsim/dshsim/pipeline/session"
	"github.com/dshsim/dshsim/tools/jobs"
)

// liveModel is a live model behind an OpenAI-compatible chat completions
// server (package llm/deepseek), reached through dsh-record's relay (the
// key is the host's alone): each call sends the conversation the log holds
// and logs the streamed chunks as they arrive.
type liveModel struct {
	relay    *relayClient
	session  string
	model    string
	provider string
	thinking string
	effort   string
	retry    llm.RetryPolicy
	gate     *jobs.Gate
}

func (m *liveModel) Info() ModelInfo {
	config, _ := json.Marshal(session.RequestContext{Provider: m.provider, Model: m.model})
	retry := m.retry
	return ModelInfo{Config: config, Provider: m.provider, Model: m.model, Retry: &retry}
}

func (m *liveModel) Call(ctx context.Context, req ModelRequest, emit func(json.RawMessage) error) (recording.Reply, error) {
	m.gate.Pump() // the host awaits the network: it yields
	events, err := req.Log.Events()
	if err != nil {
		return recording.Reply{}, fmt.Errorf("read our log for the conversation: %w", err)
	}
	msgs, err := conversation(events)
	maxTokens := 0
	if req.Summary != nil {
		msgs, err = summaryConversation(req.Summary)
		maxTokens = req.Summary.MaxTokens
	}
	if err != nil {
		return recording.Reply{}, err
	}
	tools := make([]llm.Tool, len(req.Tools))
	for i, t := range req.Tools {
		tools[i] = llm.Tool{Name: t.Name, Description: t.Description, Parameters: t.Parameters}
	}
	r := deepseek.Request{Model: m.model, System: req.System, Messages: msgs, Tools: tools, Thinking: m.thinking, ReasoningEffort: m.effort, MaxTokens: maxTokens}
	var reply recording.Reply
	send := func(c llm.Chunk) error {
		b, err := json.Marshal(c)
		if err != nil {
			return err
		}
		collect(&reply, c)
		return emit(b)
	}
	err = m.relay.Stream(ctx, r, m.session, send)
	var f *llm.Failure
	if errors.As(err, &f) {
		fin := llm.Chunk{Type: llm.FinishChunk, Reason: &llm.Finish{Kind: llm.Error, Failure: f}}
		return reply, send(fin)
	}
	return reply, err
}

// collect adds a streamed chunk to the reply being assembled.
func collect(r *recording.Reply, c llm.Chunk) {
	switch c.Type {
	case llm.BlockEnd:
		b := recording.Block{Index: c.Index, Type: c.Block.Type, Text: c.Block.Text, ID: c.Block.ID, Name: c.Block.Name, Arguments: c.Block.Arguments}
		r.Blocks = append(r.Blocks, b)
		if b.Type == llm.ToolCall {
			r.ToolCalls = append(r.ToolCalls, recording.ToolCall{ID: b.ID, Name: b.Name, Arguments: b.Arguments})
		}
	case llm.UsageChunk:
		r.Usage, _ = json.Marshal(c.Usage)
	case llm.FinishChunk:
		r.Finish = c.Reason.Kind
		if c.Reason.Failure != nil {
			r.Failure, _ = json.Marshal(c.Reason.Failure)
		}
	}
}

// surfaceMessage is the part of a message the conversation carries.
type surfaceMessage struct {
	Role    string `json:"role"`
	Content []struct {
		Type       string `json:"type"`
		Text       string `json:"text"`
		ID         string `json:"id"`
		Name       string `json:"name"`
		Arguments  string `json:"arguments"`
		ToolCallID string `json:"toolCallId"`
		IsError    bool   `json:"isError"`
		Content    []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
	} `json:"content"`
}

// conversation is the conversation a log holds: the messages of its
// surface (user/message, assistant/message and tool/result events with a
// surfaceOp, a compaction's checkpoint in place of the range it
// replaced), in surface order.
func conversation(events []session.Event) ([]llm.Message, error) {
	s, err := compaction.Fold(events)
	if err != nil {
		return nil, fmt.Errorf("our log: %w", err)
	}
	bySeq := make(map[int64]session.Event, len(events))
	for _, e := range events {
		bySeq[e.Seq] = e
	}
	on := make([]session.Event, len(s.Nodes))
	for i, n := range s.Nodes {
		on[i] = bySeq[n.Seq]
	}
	return messagesOf(on)
}

// summaryConversation is a compaction's summary call: the range's
// messages, then the instruction.
func summaryConversation(r *SummaryRequest) ([]llm.Message, error) {
	msgs, err := messagesOf(r.Events)
	if err != nil {
		return nil, err
	}
	return append(msgs, llm.Message{Role: llm.User, Content: []llm.Block{{Type: llm.Text, Text: compaction.Instruction}}}), nil
}

// messagesOf are the messages of surface events, in their order.
func messagesOf(events []session.Event) ([]llm.Message, error) {
	var out []llm.Message
	for _, e := range events {
		var m surfaceMessage
		raw := e.Data
		switch e.Type {
		case session.KindUserMessage:
		case session.KindAssistantMessage, session.KindToolResult:
			var d struct {
				Message json.RawMessage `json:"message"`
			}
			if err := json.Unmarshal(e.Data, &d); err != nil {
				return nil, fmt.Errorf("our log, seq %d: %w", e.Seq, err)
			}
			raw = d.Message
		default:
			continue
		}
		if err := json.Unmarshal(raw, &m); err != nil {
			return nil, fmt.Errorf("our log, seq %d: %w", e.Seq, err)
		}
		msg := llm.Message{Role: llm.User}
		if m.Role == "assistant" {
			msg.Role = llm.Assistant
		}
		for _, b := range m.Content {
			blk := llm.Block{Type: b.Type, Text: b.Text, ID: b.ID, Name: b.Name, Arguments: b.Arguments, ToolCallID: b.ToolCallID, IsError: b.IsError}
			for _, c := range b.Content {
				blk.Content = append(blk.Content, llm.Block{Type: c.Type, Text: c.Text})
			}
			msg.Content = append(msg.Content, blk)
		}
		out = append(out, msg)
	}
	return out, nil
}
