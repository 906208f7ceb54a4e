package acpwire

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/dshsim/dshsim/harness/replay/projection"
)

// Kind is the kind of one stdout line.
type Kind string

// The line kinds of upstream's recordings, and the two it never sent.
const (
	Initialize     Kind = "initialize result"
	NewSession     Kind = "session/new result"
	MessageChunk   Kind = "session/update agent_message_chunk"
	Permission     Kind = "session/request_permission"
	StopReason     Kind = "prompt result (stopReason)"
	PromptError    Kind = "prompt error (JSON-RPC error)"
	ToolCall       Kind = "session/update tool_call"
	ToolCallUpdate Kind = "session/update tool_call_update"
)

// KindInfo says whether a kind is compared and why (not).
type KindInfo struct {
	// Kind is the line kind.
	Kind Kind
	// Compared reports whether lines of this kind are compared.
	Compared bool
	// Why is the reason: what is compared, or why not.
	Why string
}

// Kinds is the table of every known kind. A line of a kind not listed here is
// a problem of the comparison, never skipped.
var Kinds = []KindInfo{
	{Initialize, true, "the ACP handshake: upstream's agent name, version and capabilities (image prompts only where the deployment takes images)"},
	{NewSession, true, "the session id, a {{sessionId}} token: that the session was created"},
	{Permission, true, "the stack asked the user about this tool call: tool call id, offered options and session token are compared (not the JSON-RPC id)"},
	{MessageChunk, true, "one per committed text block of an assistant message (reasoning and tool calls never), in the order the agent commits them: which replies the loop committed (not a failed or retried attempt), the interrupted text of a cancelled one, and whether a turn's text precedes or follows its prompt's answer"},
	{StopReason, true, "how each prompt's turn ended (end_turn, cancelled, max_tokens): the replay's own turn end, cancellation included, answered once the agent is idle"},
	{PromptError, true, "a JSON-RPC error: a refused session/new (invalid params, e.g. additionalDirectories) or a prompt whose turn failed (internal error: turn failed: <message>); code and message are compared"},
	{ToolCall, false, "the recorded bridge never sends tool calls on the wire; dsh-replay does not model such a frame, so a line of this kind fails the comparison"},
	{ToolCallUpdate, false, "as tool_call: never sent by the recorded bridge; a line of this kind fails the comparison"},
}

func info(k Kind) (KindInfo, bool) {
	for _, ki := range Kinds {
		if ki.Kind == k {
			return ki, true
		}
	}
	return KindInfo{}, false
}

// Line is one classified line of stdout.expected.jsonl.
type Line struct {
	// N is the 1-based line number.
	N int
	// Kind is the line's kind; an unknown kind is spelled from its method or update.
	Kind Kind
	// Frame is the parsed frame.
	Frame map[string]any
}

// Classify parses and classifies frames (one JSON object each, numbered from 1).
func Classify(frames []json.RawMessage) ([]Line, error) {
	lines := make([]Line, 0, len(frames))
	for i, raw := range frames {
		var f map[string]any
		if err := json.Unmarshal(raw, &f); err != nil {
			return nil, fmt.Errorf("line %d: %w", i+1, err)
		}
		lines = append(lines, Line{N: i + 1, Kind: kindOf(f), Frame: f})
	}
	return lines, nil
}

func kindOf(f map[string]any) Kind {
	if m, ok := f["method"].(string); ok {
		if m == "session/update" {
			p, _ := f["params"].(map[string]any)
			u, _ := p["update"].(map[string]any)
			su, _ := u["sessionUpdate"].(string)
			return Kind("session/update " + su)
		}
		return Kind(m)
	}
	if _, ok := f["error"]; ok {
		return PromptError
	}
	r, _ := f["result"].(map[string]any)
	switch {
	case r["stopReason"] != nil:
		return StopReason
	case r["protocolVersion"] != nil:
		return Initialize
	case r["sessionId"] != nil && len(r) == 1:
		return NewSession
	}
	keys := make([]string, 0, len(r))
	for k := range r {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return Kind("result {" + strings.Join(keys, ",") + "}")
}

// SessionToken is the session id as the recordings store it.
const SessionToken = "{{sessionId}}"

// Frame is one frame the replay would have sent (id left out).
type Frame struct {
	// Kind is the frame's kind.
	Kind Kind
	// Value is the frame as upstream's bridge spells it, without "id".
	Value map[string]any
}

// PermissionRequest is the frame upstream's ACP bridge sends when the stack
// asks the user about call: it offers allow_once and reject_once.
func PermissionRequest(callID string) Frame {
	return Frame{Kind: Permission, Value: map[string]any{
		"jsonrpc": "2.0", "method": "session/request_permission",
		"params": map[string]any{
			"sessionId": SessionToken,
			"toolCall":  map[string]any{"toolCallId": callID},
			"options": []any{
				map[string]any{"optionId": "allow-once", "name": "Allow once", "kind": "allow_once"},
				map[string]any{"optionId": "reject-once", "name": "Reject", "kind": "reject_once"},
			},
		},
	}}
}

// Upstream's ACP agent (VERBATIM).
const (
	AgentName    = "deepseek-harness-acp"
	AgentVersion = "0.0.1"
)

// Initialized is the initialize result; image says whether inline image
// prompts are advertised.
func Initialized(image bool) Frame {
	return Frame{Kind: Initialize, Value: map[string]any{"jsonrpc": "2.0", "result": map[string]any{
		"protocolVersion": 1.0,
		"agentInfo":       map[string]any{"name": AgentName, "version": AgentVersion},
		"agentCapabilities": map[string]any{"promptCapabilities": map[string]any{
			"image": image, "audio": false, "embeddedContext": false,
		}},
		"authMethods": []any{},
	}}}
}

// SessionCreated is the session/new result.
func SessionCreated() Frame {
	return Frame{Kind: NewSession, Value: map[string]any{"jsonrpc": "2.0", "result": map[string]any{"sessionId": SessionToken}}}
}

// AgentText is the agent_message_chunk update of one committed assistant
// text block.
func AgentText(text string) Frame {
	return Frame{Kind: MessageChunk, Value: map[string]any{"jsonrpc": "2.0", "method": "session/update", "params": map[string]any{
		"sessionId": SessionToken,
		"update":    map[string]any{"sessionUpdate": "agent_message_chunk", "content": map[string]any{"type": "text", "text": text}},
	}}}
}

// Text is the text an agent_message_chunk frame carries ("" for a frame of
// another kind).
func (f Frame) Text() string {
	p, _ := f.Value["params"].(map[string]any)
	u, _ := p["update"].(map[string]any)
	c, _ := u["content"].(map[string]any)
	s, _ := c["text"].(string)
	return s
}

// JSON-RPC error codes of the ACP SDK (VERBATIM).
const (
	CodeInvalidParams = -32602
	CodeInternalError = -32603
)

// InvalidParams is the SDK's invalid-params error with detail (no data).
func InvalidParams(detail string) Frame {
	return errorFrame(CodeInvalidParams, "Invalid params: "+detail)
}

// Failed is the JSON-RPC error of a prompt whose turn failed with message.
func Failed(message string) Frame {
	return errorFrame(CodeInternalError, "Internal error: turn failed: "+message)
}

func errorFrame(code float64, message string) Frame {
	return Frame{Kind: PromptError, Value: map[string]any{"jsonrpc": "2.0", "error": map[string]any{"code": code, "message": message}}}
}

// Stop is the prompt result for a turn that ended with reason (end_turn,
// cancelled, max_tokens).
func Stop(reason string) Frame {
	return Frame{Kind: StopReason, Value: map[string]any{"jsonrpc": "2.0", "result": map[string]any{"stopReason": reason}}}
}

// Report is the outcome of [Compare].
type Report struct {
	// Problems are differences and unmodelled lines, each naming the line.
	Problems []string
	// Counts are the lines per kind.
	Counts map[Kind]int
}

// Note renders one line: the compared and the not compared lines per kind
// (the reasons are in [Kinds]).
func (r Report) Note(file string) string {
	var kinds []Kind
	for k := range r.Counts {
		kinds = append(kinds, k)
	}
	sort.Slice(kinds, func(i, j int) bool { return kinds[i] < kinds[j] })
	var compared, not []string
	for _, k := range kinds {
		item := fmt.Sprintf("%s %d", k, r.Counts[k])
		if ki, ok := info(k); ok && ki.Compared {
			compared = append(compared, item)
		} else {
			not = append(not, item)
		}
	}
	return fmt.Sprintf("%s: compared %s; not compared %s", file, orNone(compared), orNone(not))
}

func orNone(items []string) string {
	if len(items) == 0 {
		return "none"
	}
	return strings.Join(items, ", ")
}

// Compare pairs the compared lines of the recording with the frames the
// replay would have sent, in order: the i-th compared line with the i-th
// frame, kind and value (the JSON-RPC id left out). A line of a kind the
// bridge never sends is a problem, and so is every extra or missing frame.
func Compare(file string, lines []Line, ours []Frame) Report {
	rep := Report{Counts: map[Kind]int{}}
	var want []Line
	for _, l := range lines {
		rep.Counts[l.Kind]++
		ki, ok := info(l.Kind)
		switch {
		case !ok || !ki.Compared:
			rep.Problems = append(rep.Problems, fmt.Sprintf("%s:%d: a %s line, which dsh-replay does not model (the recorded bridge never sent one)", file, l.N, l.Kind))
		default:
			want = append(want, l)
		}
	}
	// Frames are compared in order, so the first difference shifts the
	// rest: it is the one said, with how many frames each side has.
	for i := range max(len(want), len(ours)) {
		var problem []string
		switch {
		case i >= len(ours):
			problem = []string{fmt.Sprintf("%s:%d: the replay sent no %s here", file, want[i].N, want[i].Kind)}
		case i >= len(want):
			problem = []string{fmt.Sprintf("%s: the replay sent a %s the recording does not show: %s", file, ours[i].Kind, summary(ours[i].Value))}
		case want[i].Kind != ours[i].Kind:
			problem = []string{fmt.Sprintf("%s:%d: expected a %s, the replay sent a %s: %s", file, want[i].N, want[i].Kind, ours[i].Kind, summary(ours[i].Value))}
		default:
			for _, d := range projection.DiffValues("", withoutID(want[i].Frame), ours[i].Value) {
				problem = append(problem, fmt.Sprintf("%s:%d: %s: %s", file, want[i].N, want[i].Kind, d.String()))
			}
		}
		if len(problem) > 0 {
			rep.Problems = append(rep.Problems, problem...)
			if len(want) != len(ours) {
				rep.Problems = append(rep.Problems, fmt.Sprintf("%s: %d compared lines, the replay sent %d frames", file, len(want), len(ours)))
			}
			break
		}
	}
	return rep
}

func withoutID(f map[string]any) map[string]any {
	out := make(map[string]any, len(f))
	for k, v := range f {
		if k != "id" {
			out[k] = v
		}
	}
	return out
}

func summary(v map[string]any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
