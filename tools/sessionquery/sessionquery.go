package sessionquery

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/dshsim/dshsim/internal/jsjson"
	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/pipeline/session"
	"github.com/dshsim/dshsim/tools/toolreg"
)

// Tool names.
const (
	ReadName   = "session_event_read"
	SearchName = "session_event_search"
)

// VERBATIM model-facing schemas (upstream's tool-schemas.expected.json).
const (
	ReadDescription   = "Read one full unabridged event and optional neighboring raw-event summaries from an authorized session."
	ReadParameters    = `{"type":"object","properties":{"session_id":{"type":"string","description":"Target session id. Omit for the current session."},"seq":{"type":"integer","description":"Target event sequence number."},"before":{"type":"integer","description":"Number of preceding raw events to summarize. Omit for none."},"after":{"type":"integer","description":"Number of following raw events to summarize. Omit for none."}},"required":["seq"]}`
	SearchDescription = "Search prior events in one authorized session; the current session excludes the step performing this call."
	SearchParameters  = `{"type":"object","properties":{"session_id":{"type":"string","description":"Target session id. Omit for the current session."},"query":{"type":"string","description":"Literal full-text query over the target session."},"seq_from":{"type":"integer","description":"Inclusive event sequence lower bound."},"seq_to":{"type":"integer","description":"Inclusive event sequence upper bound."},"time_from":{"type":"string","description":"Inclusive timezone-qualified ISO 8601 event-time lower bound."},"time_to":{"type":"string","description":"Inclusive timezone-qualified ISO 8601 event-time upper bound."},"event_types":{"type":"array","description":"Event types to include.","items":{"type":"string"}},"surfaces":{"type":"array","description":"Event surfaces to include.","items":{"type":"string","enum":["current","shadowed","log-only"]}}},"required":["query"]}`
)

// PromptSection is the tool:session-query section of the system prompt (VERBATIM).
const PromptSection = "Use session_search to find relevant work from prior sessions, or session_event_search to search earlier events in one session. Search results are cursor-free and workspace-scoped. Follow a useful hit with session_trace, session_event_trace, or session_event_read when you need lineage, relationships, or exact data."

// Limits (upstream's defaults).
const (
	// ReadWindowMax bounds before and after.
	ReadWindowMax = 50
	// MaxSearchResults is the default cap of search hits.
	MaxSearchResults = 100
)

// Error names and codes (VERBATIM).
const (
	nameQuery   = "SessionQueryError"
	nameHarness = "HarnessError"

	CodeInvalidFilter = "SESSION_QUERY_INVALID_FILTER"
	CodeInvalidQuery  = "SESSION_QUERY_INVALID_QUERY"
	CodeInvalidWindow = "SESSION_QUERY_INVALID_WINDOW"
	CodeNotFound      = "SESSION_QUERY_EVENT_NOT_FOUND"
	CodeMissingAgent  = "SESSION_QUERY_TOOL_MISSING_AGENT"
	CodeUnauthorized  = "SESSION_QUERY_TOOL_UNAUTHORIZED"
)

var (
	errMissingAgent = pipeline.NewError(nameHarness, CodeMissingAgent, "session query tools require an agent-bound caller")
	errOutside      = pipeline.NewError(nameHarness, CodeUnauthorized, "session target is outside the caller workspace")
	errNotFound     = pipeline.NewError(nameQuery, CodeNotFound, "session event was not found")
	errWindow       = pipeline.NewError(nameQuery, CodeInvalidWindow, "session event window is invalid")
)

// Source is a session the tools read: the caller's own *session.Log, or
// another session's log ([Store]).
type Source interface {
	ID() string
	Header() session.Header
	Events() ([]session.Event, error)
}

// Config configures the tools.
type Config struct {
	// Sessions resolves another session id to its log (nil: only the
	// caller's own session can be read; [Store] resolves the logs of a
	// directory). A session whose header cwd is not the caller's is
	// refused.
	Sessions func(id string) (Source, bool)
	// MaxSearchResults caps search hits (0: [MaxSearchResults]).
	MaxSearchResults int
}

// New returns the registrations of session_event_read, which brings the
// tool:session-query prompt section (order 113), and session_event_search.
func New(cfg Config) ([]toolreg.Tool, error) {
	if cfg.MaxSearchResults <= 0 {
		cfg.MaxSearchResults = MaxSearchResults
	}
	return []toolreg.Tool{
		{Def: pipeline.Tool{Name: ReadName, Description: ReadDescription, Parameters: json.RawMessage(ReadParameters), Run: cfg.read, ConcurrencySafe: true},
			Section: &toolreg.Section{Name: "tool:session-query", Order: 113, Text: PromptSection}},
		{Def: pipeline.Tool{Name: SearchName, Description: SearchDescription, Parameters: json.RawMessage(SearchParameters), Run: cfg.search}},
	}, nil
}

// target resolves the session a call reads: the caller's (current is
// true), or another one in the caller's workspace.
func (cfg Config) target(call *pipeline.Call, raw map[string]json.RawMessage) (l Source, current bool, err error) {
	if call.Agent() == nil || call.Agent().Session == nil {
		return nil, false, errMissingAgent
	}
	own := call.Agent().Session
	v, ok := raw["session_id"]
	if !ok || string(v) == "null" {
		return own, true, nil
	}
	var id string
	if json.Unmarshal(v, &id) != nil {
		return nil, false, errOutside
	}
	if id == own.ID() {
		return own, true, nil
	}
	if cfg.Sessions != nil {
		// Only a session of the caller's workspace: the store holds every
		// workspace's sessions.
		if l, ok := cfg.Sessions(id); ok && l.Header().Cwd == own.Header().Cwd {
			return l, false, nil
		}
	}
	return nil, false, errOutside
}

// safeInt reads a non-negative safe integer argument (JavaScript's
// Number.isSafeInteger and >= 0); ok is false when the key is absent.
func safeInt(raw map[string]json.RawMessage, key string) (n int64, ok bool, err error) {
	return safeIntNamed(raw, key, key)
}

// safeIntNamed is safeInt whose error names the argument as name.
func safeIntNamed(raw map[string]json.RawMessage, key, name string) (n int64, ok bool, err error) {
	v, present := raw[key]
	if !present || string(v) == "null" {
		return 0, false, nil
	}
	bad := pipeline.NewError(nameQuery, CodeInvalidFilter, name+" must be a non-negative safe integer")
	var f float64
	if json.Unmarshal(v, &f) != nil || f != math.Trunc(f) || f < 0 || f > 1<<53-1 {
		return 0, true, bad
	}
	return int64(f), true, nil
}

func decode(call *pipeline.Call) (map[string]json.RawMessage, error) {
	var raw map[string]json.RawMessage
	if err := call.DecodeArgs(&raw); err != nil || raw == nil {
		return nil, fmt.Errorf("invalid arguments: expected an object")
	}
	return raw, nil
}

// textOutput is upstream's TEXT_OUTPUT: the value a run_code program gets
// is the text itself, a JSON string.
func textOutput(s string) pipeline.Output {
	v, _ := json.Marshal(s) // a Go string always marshals
	return pipeline.Output{Value: v, Content: []pipeline.Block{pipeline.TextBlock(s)}}
}

// title is the session's latest title, else "untitled".
func title(events []session.Event) string {
	if t, ok := session.LastField(events, session.KindTitle, "title"); ok && t != "" {
		return t
	}
	return "untitled"
}

// isoTime renders epoch milliseconds as JavaScript's toISOString does.
func isoTime(ms int64) string {
	return time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05.000Z")
}

// heading is the first line of both tools' output.
func heading(l Source, events []session.Event) string {
	return "Session " + l.ID() + " — " + title(events)
}

func (cfg Config) read(_ context.Context, call *pipeline.Call) (pipeline.Output, error) {
	raw, err := decode(call)
	if err != nil {
		return pipeline.Output{}, err
	}
	seq, ok, err := safeInt(raw, "seq")
	if err != nil {
		return pipeline.Output{}, err
	}
	if !ok {
		return pipeline.Output{}, pipeline.NewError(nameQuery, CodeInvalidFilter, "seq must be a non-negative safe integer")
	}
	before, _, err := safeInt(raw, "before")
	if err != nil {
		return pipeline.Output{}, err
	}
	after, _, err := safeInt(raw, "after")
	if err != nil {
		return pipeline.Output{}, err
	}
	l, _, err := cfg.target(call, raw)
	if err != nil {
		return pipeline.Output{}, err
	}
	if before > ReadWindowMax || after > ReadWindowMax {
		return pipeline.Output{}, errWindow
	}
	events, err := l.Events()
	if err != nil {
		return pipeline.Output{}, pipeline.NewError(nameHarness, "SESSION_QUERY_TOOL_FAILED", "session query operation failed")
	}
	at := -1
	for i, e := range events {
		if e.Seq == seq {
			at = i
			break
		}
	}
	if at < 0 {
		return pipeline.Output{}, errNotFound
	}
	var b strings.Builder
	b.WriteString(heading(l, events))
	fmt.Fprintf(&b, "\nTarget event seq %d:\n```json\n", seq)
	ev, err := jsjson.Parse(eventJSON(events[at]))
	if err != nil {
		return pipeline.Output{}, pipeline.NewError(nameHarness, "SESSION_QUERY_TOOL_FAILED", "session query operation failed")
	}
	UpstreamView(events[at].Type, ev) // the model reads an event as upstream logs it
	b.WriteString(jsjson.StringifyIndent(ev, "  "))
	b.WriteString("\n```")
	lo := max(0, at-int(before))
	hi := min(len(events)-1, at+int(after))
	if lo < at {
		b.WriteString("\n\nBefore:")
		for _, e := range events[lo:at] {
			b.WriteString("\n" + summary(e))
		}
	}
	if hi > at {
		b.WriteString("\n\nAfter:")
		for _, e := range events[at+1 : hi+1] {
			b.WriteString("\n" + summary(e))
		}
	}
	return textOutput(b.String()), nil
}

// eventJSON is the event as the log stores it (type, seq, time, data,
// sourceEventSeqs, surfaceOp).
func eventJSON(e session.Event) []byte {
	b, _ := json.Marshal(e)
	return b
}

// summary is one neighbour entry.
func summary(e session.Event) string {
	head := fmt.Sprintf("- seq %d | %s | %s", e.Seq, e.Type, isoTime(e.Time))
	text := SemanticText(e)
	if text == "" {
		return head + " | (no semantic text)"
	}
	return head + "\n  " + strings.ReplaceAll(text, "\n", "\n  ")
}

// SemanticText is upstream's extractSessionEventText: the searchable text
// of an event, "" for structural events (steps, turns' start, assistant
// chunks, headers, titles) and unknown types. Parts are trimmed, empty
// parts dropped, the rest joined with "\n".
func SemanticText(e session.Event) string {
	var d struct {
		Content   []json.RawMessage                   `json:"content"`
		Message   struct{ Content []json.RawMessage } `json:"message"`
		Name      string                              `json:"name"`
		Arguments string                              `json:"arguments"`
		Error     *struct{ Name, Code string }        `json:"error"`
		Todos     []struct{ Status, Content string }  `json:"todos"`
		Reason    struct {
			Kind  string                   `json:"kind"`
			Error struct{ Message string } `json:"error"`
		} `json:"reason"`
	}
	// a field of another shape stays empty; the rest still count
	_ = json.Unmarshal(e.Data, &d)
	switch e.Type {
	case session.KindUserMessage:
		return joinText(blocksText(d.Content))
	case session.KindAssistantMessage:
		return joinText(blocksText(d.Message.Content))
	case session.KindToolCall:
		return joinText([]string{d.Name, d.Arguments})
	case session.KindToolResult:
		parts := []string{joinText(blocksText(d.Message.Content))}
		if d.Error != nil {
			parts = append(parts, d.Error.Name, d.Error.Code)
		}
		return joinText(parts)
	case session.KindTodoWrite:
		var parts []string
		for _, t := range d.Todos {
			parts = append(parts, t.Status, t.Content)
		}
		return joinText(parts)
	case session.KindTurnEnd:
		switch d.Reason.Kind {
		case session.EndError:
			return joinText([]string{session.EndError, d.Reason.Error.Message})
		case session.EndAborted, session.EndMaxTokens, session.EndInterrupted:
			return d.Reason.Kind
		}
	}
	return ""
}

// joinText trims each part (JavaScript's trim), drops the empty ones and
// joins the rest with "\n".
func joinText(parts []string) string {
	var kept []string
	for _, p := range parts {
		if p = jsjson.Trim(p); p != "" {
			kept = append(kept, p)
		}
	}
	return strings.Join(kept, "\n")
}

// blocksText is the text parts of content blocks: a text block's text, a
// tool-call block's name and arguments, a tool-result block's inner parts;
// reasoning and other blocks give none.
func blocksText(blocks []json.RawMessage) []string {
	var parts []string
	for _, raw := range blocks {
		var b struct {
			Type      string            `json:"type"`
			Text      string            `json:"text"`
			Name      string            `json:"name"`
			Arguments string            `json:"arguments"`
			Content   []json.RawMessage `json:"content"`
		}
		if json.Unmarshal(raw, &b) != nil {
			continue
		}
		switch b.Type {
		case "text":
			parts = append(parts, b.Text)
		case "tool-call":
			parts = append(parts, b.Name, b.Arguments)
		case "tool-result":
			parts = append(parts, blocksText(b.Content)...)
		}
	}
	return parts
}
