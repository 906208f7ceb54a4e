package hooks

import (
	"strconv"
	"strings"

	"github.com/dshsim/dshsim/internal/jsjson"
)

// payloadShape selects the stdin payload of a dialect.
type payloadShape int

const (
	claudeCodePayload payloadShape = iota
	codexPayload
)

// callFacts are what a payload says about one call and its session.
type callFacts struct {
	// SessionID is the session header id ("" without a session).
	SessionID string
	// TranscriptPath is the session log path ("" without one).
	TranscriptPath string
	// Cwd is the session header cwd, else the process cwd.
	Cwd string
	// Turn is the number of the last turn/start (0 without one).
	Turn int
	// Model is the Codex plugin option "model".
	Model string
	// ToolName, CallID and Args are the call's.
	ToolName, CallID string
	Args             []byte
	// Response is the text of the result's text blocks (PostToolUse only).
	Response *string
	// Prompt is the text of the claimed messages (UserPromptSubmit only).
	Prompt string
	// Source is the session's start source, "startup" or "resume"
	// (SessionStart only).
	Source string
	// AgentID is the child's id (SubagentStart, SubagentStop only).
	AgentID string
}

// SubagentType is the agent_type of SubagentStart and SubagentStop, and
// their matcher subject: upstream's delegation seam carries no kind, so
// its bridge reports Claude Code's Task default (VERBATIM).
const SubagentType = "general-purpose"

// payload returns the stdin bytes of one hook run: JSON.stringify of the
// payload object with its keys in upstream's order, plus "\n" for Claude Code.
// The common part (session, cwd, event; Codex adds model, permission mode and
// turn at the turn's points) is followed by the point's own: the tool call
// (PreToolUse, PostToolUse), the prompt (UserPromptSubmit),
// stop_hook_active, always false as upstream has no loop guard (Stop; Codex
// adds last_assistant_message null), the source (SessionStart), or the
// child's id and agent_type (SubagentStart; SubagentStop adds
// stop_hook_active false).
func payload(d *Dialect, point Point, f callFacts) []byte {
	var o object
	o.add("session_id", jsjson.Quote(f.SessionID))
	switch {
	case d.payload == claudeCodePayload || f.TranscriptPath != "":
		o.add("transcript_path", jsjson.Quote(f.TranscriptPath))
	default:
		o.add("transcript_path", "null") // Codex: null without persistence
	}
	o.add("cwd", jsjson.Quote(f.Cwd))
	o.add("hook_event_name", jsjson.Quote(string(point)))
	if d.payload == codexPayload {
		o.add("model", jsjson.Quote(f.Model))
		o.add("permission_mode", `"default"`)
		if point.turnScoped() {
			o.add("turn_id", jsjson.Quote(strconv.Itoa(f.Turn)))
		}
	}
	switch point {
	case SessionStart:
		o.add("source", jsjson.Quote(f.Source))
	case SubagentStart, SubagentStop:
		o.add("agent_id", jsjson.Quote(f.AgentID))
		o.add("agent_type", jsjson.Quote(SubagentType))
		if point == SubagentStop {
			o.add("stop_hook_active", "false")
		}
	case UserPromptSubmit:
		o.add("prompt", jsjson.Quote(f.Prompt))
	case Stop:
		o.add("stop_hook_active", "false")
		if d.payload == codexPayload {
			o.add("last_assistant_message", "null")
		}
	default:
		o.add("tool_name", jsjson.Quote(f.ToolName))
		if d.payload == codexPayload {
			o.add("tool_input", codexToolInput(f.Args))
		} else {
			o.add("tool_input", toolInput(f.Args))
		}
		o.add("tool_use_id", jsjson.Quote(f.CallID))
		if f.Response != nil {
			o.add("tool_response", jsjson.Quote(*f.Response))
		}
	}
	out := o.String()
	if d.stdinNewline {
		out += "\n"
	}
	return []byte(out)
}

// toolInput is the model's argument text parsed as JSON and written again
// compactly in JavaScript's key order; text that is not JSON stays a string;
// no text at all is {}.
func toolInput(args []byte) string {
	if len(args) == 0 {
		return "{}"
	}
	v, err := jsjson.Parse(args)
	if err != nil {
		return jsjson.Quote(string(args))
	}
	return jsjson.Stringify(v)
}

// codexToolInput keeps only the command argument: {"command": <string or "">}.
func codexToolInput(args []byte) string {
	cmd := `""`
	if v, err := jsjson.Parse(args); err == nil {
		if c := v.Get("command"); c != nil && c.Kind == jsjson.String {
			cmd = jsjson.QuoteUnits(c.Units)
		}
	}
	return `{"command":` + cmd + `}`
}

// object writes a JSON object with keys in insertion order.
type object struct{ b strings.Builder }

func (o *object) add(key, raw string) {
	if o.b.Len() == 0 {
		o.b.WriteByte('{')
	} else {
		o.b.WriteByte(',')
	}
	o.b.WriteString(jsjson.Quote(key))
	o.b.WriteByte(':')
	o.b.WriteString(raw)
}

func (o *object) String() string {
	if o.b.Len() == 0 {
		return "{}"
	}
	return o.b.String() + "}"
}
