package acpwire

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// The frames as upstream's bridge spells them, key order included.
type (
	rpcResult struct {
		JSONRPC string `json:"jsonrpc"`
		ID      int    `json:"id"`
		Result  any    `json:"result"`
	}
	rpcError struct {
		JSONRPC string `json:"jsonrpc"`
		ID      int    `json:"id"`
		Error   struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	rpcRequest struct {
		JSONRPC string `json:"jsonrpc"`
		ID      int    `json:"id"`
		Method  string `json:"method"`
		Params  any    `json:"params"`
	}
	rpcNotification struct {
		JSONRPC string `json:"jsonrpc"`
		Method  string `json:"method"`
		Params  any    `json:"params"`
	}
	initResult struct {
		ProtocolVersion int `json:"protocolVersion"`
		AgentInfo       struct {
			Name    string `json:"name"`
			Version string `json:"version"`
		} `json:"agentInfo"`
		AgentCapabilities struct {
			PromptCapabilities struct {
				Image           bool `json:"image"`
				Audio           bool `json:"audio"`
				EmbeddedContext bool `json:"embeddedContext"`
			} `json:"promptCapabilities"`
		} `json:"agentCapabilities"`
		AuthMethods []any `json:"authMethods"`
	}
	permissionOption struct {
		OptionID string `json:"optionId"`
		Name     string `json:"name"`
		Kind     string `json:"kind"`
	}
	permissionParams struct {
		SessionID string `json:"sessionId"`
		ToolCall  struct {
			ToolCallID string `json:"toolCallId"`
		} `json:"toolCall"`
		Options []permissionOption `json:"options"`
	}
	textUpdate struct {
		SessionID string `json:"sessionId"`
		Update    struct {
			SessionUpdate string `json:"sessionUpdate"`
			Content       struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"content"`
		} `json:"update"`
	}
)

// Render writes frames as the lines of stdout.expected.jsonl, the way
// upstream's normaliser leaves them: the client's requests (initialize,
// session/new, each prompt) have raw ids 0, 1, 2, ... in order, the agent's
// permission requests 0, 1, ... of their own, and every raw id becomes its
// first-seen ordinal (so the first permission request shares id 1 with the
// initialize result). scrub normalises the text of agent messages as
// upstream's normaliser does every string of a frame (the cwd, ids).
func Render(frames []Frame, scrub func(string) string) ([]byte, error) {
	ordinal := map[int]int{}
	id := func(raw int) int {
		if n, ok := ordinal[raw]; ok {
			return n
		}
		ordinal[raw] = len(ordinal) + 1
		return ordinal[raw]
	}
	client, agent := 0, 0
	var out bytes.Buffer
	for _, f := range frames {
		var v any
		switch f.Kind {
		case Initialize:
			var r initResult
			r.ProtocolVersion = 1
			r.AgentInfo.Name, r.AgentInfo.Version = AgentName, AgentVersion
			r.AgentCapabilities.PromptCapabilities.Image = imagePrompts(f)
			r.AuthMethods = []any{}
			v = rpcResult{"2.0", id(client), r}
			client++
		case NewSession:
			v = rpcResult{"2.0", id(client), map[string]string{"sessionId": SessionToken}}
			client++
		case StopReason:
			r, _ := f.Value["result"].(map[string]any)
			v = rpcResult{"2.0", id(client), map[string]any{"stopReason": r["stopReason"]}}
			client++
		case PromptError:
			e := rpcError{JSONRPC: "2.0", ID: id(client)}
			m, _ := f.Value["error"].(map[string]any)
			e.Error.Code = CodeInternalError
			if c, ok := m["code"].(float64); ok {
				e.Error.Code = int(c)
			}
			e.Error.Message, _ = m["message"].(string)
			v = e
			client++
		case Permission:
			p, _ := f.Value["params"].(map[string]any)
			tc, _ := p["toolCall"].(map[string]any)
			var pp permissionParams
			pp.SessionID = SessionToken
			pp.ToolCall.ToolCallID, _ = tc["toolCallId"].(string)
			pp.Options = []permissionOption{{"allow-once", "Allow once", "allow_once"}, {"reject-once", "Reject", "reject_once"}}
			v = rpcRequest{"2.0", id(agent), "session/request_permission", pp}
			agent++
		case MessageChunk:
			p, _ := f.Value["params"].(map[string]any)
			u, _ := p["update"].(map[string]any)
			c, _ := u["content"].(map[string]any)
			var tu textUpdate
			tu.SessionID = SessionToken
			tu.Update.SessionUpdate = "agent_message_chunk"
			tu.Update.Content.Type = "text"
			text, _ := c["text"].(string)
			tu.Update.Content.Text = scrub(text)
			v = rpcNotification{"2.0", "session/update", tu}
		default:
			return nil, fmt.Errorf("acpwire: no rendering for a %s frame", f.Kind)
		}
		enc := json.NewEncoder(&out)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(v); err != nil {
			return nil, err
		}
	}
	return out.Bytes(), nil
}

// imagePrompts is an initialize frame's image prompt capability.
func imagePrompts(f Frame) bool {
	r, _ := f.Value["result"].(map[string]any)
	c, _ := r["agentCapabilities"].(map[string]any)
	p, _ := c["promptCapabilities"].(map[string]any)
	image, _ := p["image"].(bool)
	return image
}
