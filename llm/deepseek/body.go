package deepseek

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/dshsim/dshsim/internal/jsjson"
	"github.com/dshsim/dshsim/llm"
)

// Request is one chat-completions request.
type Request struct {
	// Model is the wire model name, e.g. deepseek-v4-flash.
	Model string
	// System is the system prompt ("" sends none).
	System string
	// Messages is the conversation.
	Messages []llm.Message
	// Tools are the tools offered.
	Tools []llm.Tool
	// Thinking is "enabled", "disabled" or "" (not sent).
	Thinking string
	// ReasoningEffort is off, low, high, max or "" (not sent); off sends
	// thinking disabled and no effort.
	ReasoningEffort string
	// Temperature, when set, is sent.
	Temperature *float64
	// MaxTokens, when positive, is sent as max_tokens.
	MaxTokens int
	// Stop, when set, is sent.
	Stop []string
}

type wireThinking struct {
	Type string `json:"type"`
}

type wireFunction struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}

type wireTool struct {
	Type     string       `json:"type"`
	Function wireFunction `json:"function"`
}

type wireCallFunction struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type wireCall struct {
	ID       string           `json:"id"`
	Type     string           `json:"type"`
	Function wireCallFunction `json:"function"`
}

type wireMessage struct {
	Role             string     `json:"role"`
	ToolCallID       string     `json:"tool_call_id,omitempty"`
	Content          string     `json:"content"`
	ReasoningContent string     `json:"reasoning_content,omitempty"`
	ToolCalls        []wireCall `json:"tool_calls,omitempty"`
}

type wireBody struct {
	Model         string        `json:"model"`
	Messages      []wireMessage `json:"messages"`
	Stream        bool          `json:"stream"`
	StreamOptions struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	Thinking        *wireThinking `json:"thinking,omitempty"`
	ReasoningEffort string        `json:"reasoning_effort,omitempty"`
	Tools           []wireTool    `json:"tools,omitempty"`
	Temperature     *float64      `json:"temperature,omitempty"`
	MaxTokens       int           `json:"max_tokens,omitempty"`
	Stop            []string      `json:"stop,omitempty"`
}

// thinking resolves the thinking type and the wire effort: an effort off
// disables thinking; low, high and max enable it with that effort; no
// effort sends the configured thinking type alone.
func thinking(r Request) (typ, effort string, err error) {
	switch r.ReasoningEffort {
	case "":
		return r.Thinking, "", nil
	case "off":
		return "disabled", "", nil
	case "low", "high", "max":
		if r.Thinking == "disabled" {
			return "", "", fmt.Errorf("DeepSeek deployment does not support reasoning effort %q", r.ReasoningEffort)
		}
		return "enabled", r.ReasoningEffort, nil
	}
	return "", "", fmt.Errorf("DeepSeek does not support reasoning effort %q", r.ReasoningEffort)
}

// Body is the request body as upstream sends it.
func Body(r Request) ([]byte, error) {
	b := wireBody{Model: r.Model, Stream: true, Temperature: r.Temperature, MaxTokens: r.MaxTokens, Stop: r.Stop}
	b.StreamOptions.IncludeUsage = true
	typ, effort, err := thinking(r)
	if err != nil {
		return nil, err
	}
	if typ != "" {
		b.Thinking = &wireThinking{typ}
	}
	b.ReasoningEffort = effort
	if r.System != "" {
		b.Messages = append(b.Messages, wireMessage{Role: "system", Content: r.System})
	}
	b.Messages = append(b.Messages, messages(r.Messages)...)
	if b.Messages == nil {
		b.Messages = []wireMessage{}
	}
	for _, t := range r.Tools {
		b.Tools = append(b.Tools, wireTool{Type: "function", Function: wireFunction{t.Name, t.Description, t.Parameters}})
	}
	return jsjson.Marshal(b)
}

// joined is the text of the blocks of one type, joined with "".
func joined(blocks []llm.Block, typ string) string {
	var b strings.Builder
	for _, x := range blocks {
		if x.Type == typ {
			b.WriteString(x.Text)
		}
	}
	return b.String()
}

// messages serializes the conversation: a user message's text first (sent
// also when empty unless it carries tool results), then one tool message
// per result; an assistant message with its reasoning and tool calls.
func messages(ms []llm.Message) []wireMessage {
	var out []wireMessage
	for _, m := range ms {
		if m.Role == llm.Assistant {
			w := wireMessage{Role: "assistant", Content: joined(m.Content, llm.Text), ReasoningContent: joined(m.Content, llm.Reasoning)}
			for _, b := range m.Content {
				if b.Type == llm.ToolCall {
					w.ToolCalls = append(w.ToolCalls, wireCall{ID: b.ID, Type: "function", Function: wireCallFunction{b.Name, b.Arguments}})
				}
			}
			out = append(out, w)
			continue
		}
		var results []llm.Block
		for _, b := range m.Content {
			if b.Type == llm.ToolResult {
				results = append(results, b)
			}
		}
		if text := joined(m.Content, llm.Text); text != "" || len(results) == 0 {
			out = append(out, wireMessage{Role: "user", Content: text})
		}
		for _, r := range results {
			text := joined(r.Content, llm.Text)
			if text == "" {
				text = "(no output)"
			}
			out = append(out, wireMessage{Role: "tool", ToolCallID: r.ToolCallID, Content: text})
		}
	}
	return out
}
