package recording

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/dshsim/dshsim/pipeline/session"
)

// EventTypes is the event vocabulary a recording may use (upstream's session
// log schema). Any other type is a defect of the recording.
var EventTypes = map[string]bool{
	session.KindInboxSpliced:     true,
	session.KindTurnStart:        true,
	session.KindTurnEnd:          true,
	session.KindStepStart:        true,
	session.KindStepEnd:          true,
	session.KindUserMessage:      true,
	session.KindTitle:            true,
	session.KindRequestHeader:    true,
	session.KindRequestContext:   true,
	session.KindAssistantChunk:   true,
	session.KindAssistantMessage: true,
	session.KindToolCall:         true,
	session.KindToolResult:       true,
	session.KindApprovalAsked:    true,
	session.KindApprovalDecided:  true,
	session.KindApprovalPolicy:   true,
	session.KindSandboxMode:      true,
	session.KindPermissionPreset: true,
	session.KindCommandRun:       true,
	session.KindCommandDone:      true,
	// a compaction: its start, summary and end around the checkpoint
	session.KindCompactionStart:   true,
	session.KindCompactionSummary: true,
	session.KindCompactionEnd:     true,
	session.KindCompactionPrune:   true,
	session.KindHookInvoked:       true,
	session.KindHookResult:        true,
	session.KindRetry:             true,
	// delegation: a child's descriptor and the end of its seed
	session.KindSubagentDescriptor: true,
	session.KindEndSeed:            true,
	// the workflow tool's run, in the parent's log
	session.KindWorkflowRunStart:   true,
	session.KindWorkflowAgentStart: true,
	session.KindWorkflowAgentEnd:   true,
	session.KindWorkflowRunEnd:     true,
	// the retried attempt of a model call starts (after llm/retry's delay)
	session.KindRetryStarted: true,
	// the model-made session title's own request (its chunks are not logged)
	session.KindTitleRequest: true,
	// run_code's nested calls: upstream logs a start and a settle event per call
	session.KindCodeDispatchStart: true,
	session.KindCodeDispatch:      true,
	// todo_write's snapshot of the list, between its tool/call and tool/result
	session.KindTodoWrite: true,
	// a change of the session's durable goal (the goal tools, a goal round's end)
	session.KindGoalChange: true,
	session.KindPlanMode:   true,
}

// Packed row types and the chunk type each member expands to.
var packedRows = map[string]string{
	"text-chunks":      "text-delta",
	"reasoning-chunks": "reasoning-delta",
	"tool-call-chunks": "tool-call-delta",
}

// Typed views of the events whose fields the replay reads; decoding into them
// checks the field types (a wrong type names its path, e.g. data.turn).
type (
	turnData struct {
		Turn *int `json:"turn"`
	}
	turnEndData struct {
		Turn   *int            `json:"turn"`
		Reason *map[string]any `json:"reason"`
	}
	stepData struct {
		Turn *int `json:"turn"`
		Step *int `json:"step"`
	}
	userMessageData struct {
		Content *[]struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		Source *struct {
			Kind     string `json:"kind"`
			Plugin   string `json:"plugin"`
			Sections []struct {
				Name string `json:"name"`
				Text string `json:"text"`
			} `json:"sections"`
		} `json:"source"`
	}
	chunkData struct {
		Turn  *int            `json:"turn"`
		Step  *int            `json:"step"`
		Chunk *map[string]any `json:"chunk"`
	}
	toolCallData struct {
		Turn      *int    `json:"turn"`
		Step      *int    `json:"step"`
		CallID    *string `json:"callId"`
		Name      *string `json:"name"`
		Arguments *string `json:"arguments"`
	}
	askedData struct {
		ID       *string `json:"id"`
		ToolName *string `json:"toolName"`
		CallID   *string `json:"callId"`
		Reason   *string `json:"reason"`
	}
	decidedData struct {
		ID      *string `json:"id"`
		Outcome *string `json:"outcome"`
	}
	toolResultData struct {
		Turn    *int `json:"turn"`
		Step    *int `json:"step"`
		Message *struct {
			Source struct {
				Kind   string `json:"kind"`
				CallID string `json:"callId"`
			} `json:"source"`
			Content []struct {
				Type       string `json:"type"`
				ToolCallID string `json:"toolCallId"`
				Content    []struct {
					Type string `json:"type"`
					Text string `json:"text"`
				} `json:"content"`
				IsError bool `json:"isError"`
			} `json:"content"`
		} `json:"message"`
		Error *struct {
			Name string `json:"name"`
			Code string `json:"code"`
		} `json:"error"`
		Meta json.RawMessage `json:"meta"`
	}
)

// views lists, per event type, the typed view of its data and the fields
// that must be present.
var views = map[string]func() (any, func(v any) string){
	session.KindTurnStart: view(func(d *turnData) string { return missing(d.Turn == nil, "data.turn") }),
	session.KindTurnEnd: view(func(d *turnEndData) string {
		return missing(d.Turn == nil, "data.turn") + missing(d.Reason == nil, "data.reason")
	}),
	session.KindStepStart: stepView, session.KindStepEnd: stepView,
	session.KindUserMessage: view(func(d *userMessageData) string {
		return missing(d.Content == nil, "data.content") + missing(d.Source == nil, "data.source")
	}),
	session.KindAssistantChunk: view(func(d *chunkData) string {
		return missing(d.Turn == nil, "data.turn") + missing(d.Step == nil, "data.step") + missing(d.Chunk == nil, "data.chunk")
	}),
	session.KindToolCall: view(func(d *toolCallData) string {
		return missing(d.CallID == nil, "data.callId") + missing(d.Name == nil, "data.name") + missing(d.Arguments == nil, "data.arguments")
	}),
	session.KindApprovalAsked: view(func(d *askedData) string {
		return missing(d.ID == nil, "data.id") + missing(d.ToolName == nil, "data.toolName")
	}),
	session.KindApprovalDecided: view(func(d *decidedData) string {
		return missing(d.ID == nil, "data.id") + missing(d.Outcome == nil, "data.outcome")
	}),
	session.KindToolResult: view(func(d *toolResultData) string { return missing(d.Message == nil, "data.message") }),
	session.KindGoalChange: view(func(d *goalChangeData) string {
		return missing(d.Kind == nil, "data.kind") + missing(d.Version == nil, "data.version") + missing(d.Operation == nil, "data.operation")
	}),
	session.KindCompactionStart: view((*compactionData).missingLifecycle),
	session.KindCompactionEnd:   view((*compactionData).missingLifecycle),
	session.KindCompactionSummary: view(func(d *compactionSummaryData) string {
		return missing(d.CompactionID == nil, "data.compactionId") + missing(d.Summary == nil, "data.summary") +
			missing(d.ShadowedRange == nil, "data.shadowedRange") + missing(d.ShadowedSeqs == nil, "data.shadowedSeqs") +
			missing(d.ShadowedTokenCount == nil, "data.shadowedTokenCount")
	}),
	session.KindPlanMode:          view(func(d *planModeData) string { return missing(d.Active == nil, "data.active") }),
	session.KindCodeDispatchStart: view((*dispatchData).missingStart),
	session.KindCodeDispatch: view(func(d *dispatchData) string {
		return d.missingStart() + missing(d.IsError == nil, "data.isError") + missing(d.Content == nil, "data.content")
	}),
}

var stepView = view(func(d *stepData) string {
	return missing(d.Turn == nil, "data.turn") + missing(d.Step == nil, "data.step")
})

// compactionData is compaction/start's and compaction/end's data: the
// compaction's id and the turn that owns it (null: none, a manual one),
// and the end's error.
type compactionData struct {
	CompactionID *string     `json:"compactionId"`
	Turn         presentTurn `json:"turn"`
	Error        *string     `json:"error"`
}

func (d *compactionData) missingLifecycle() string {
	return missing(d.CompactionID == nil, "data.compactionId") + missing(!d.Turn.present, "data.turn")
}

// presentTurn is a turn number or null, noting that it was present.
type presentTurn struct{ present bool }

func (p *presentTurn) UnmarshalJSON(b []byte) error {
	p.present = true
	if string(b) == "null" {
		return nil
	}
	var n int
	return json.Unmarshal(b, &n)
}

// compactionSummaryData is compaction/summary's data: what the script
// and the comparison read of it.
type compactionSummaryData struct {
	CompactionID  *string            `json:"compactionId"`
	Summary       *[]json.RawMessage `json:"summary"`
	ShadowedRange *struct {
		Start *int64 `json:"start"`
		End   *int64 `json:"end"`
	} `json:"shadowedRange"`
	ShadowedSeqs       *[]int64 `json:"shadowedSeqs"`
	ShadowedTokenCount *int     `json:"shadowedTokenCount"`
}

// goalChangeData is a goal/change's data: what the projection reads of it
// (its goal or tombstone is compared as it is).
type goalChangeData struct {
	Kind      *string `json:"kind"`
	Version   *int    `json:"version"`
	Operation *string `json:"operation"`
}

// planModeData is a plan/mode's data: whether plan mode is active (a
// boolean, as upstream's invariant requires).
type planModeData struct {
	Active *bool `json:"active"`
}

// dispatchData is the data of run_code's two nested-call events.
type dispatchData struct {
	RootCallID   *string          `json:"rootCallId"`
	ParentCallID *string          `json:"parentCallId"`
	SubCallID    *string          `json:"subCallId"`
	Name         *string          `json:"name"`
	Arguments    *json.RawMessage `json:"arguments"`
	IsError      *bool            `json:"isError"`
	Content      *[]struct {
		Type string `json:"type"`
	} `json:"content"`
}

func (d *dispatchData) missingStart() string {
	return missing(d.RootCallID == nil, "data.rootCallId") + missing(d.ParentCallID == nil, "data.parentCallId") +
		missing(d.SubCallID == nil, "data.subCallId") + missing(d.Name == nil, "data.name") + missing(d.Arguments == nil, "data.arguments")
}

// view makes a typed view: a fresh *T to decode the data into, and the
// check that lists what required returns for the decoded value (the missing
// fields, each ended by a NUL).
func view[T any](required func(d *T) string) func() (any, func(any) string) {
	return func() (any, func(any) string) {
		return new(T), func(v any) string { return required(v.(*T)) }
	}
}

func missing(cond bool, field string) string {
	if cond {
		return field + "\x00"
	}
	return ""
}

type rawLine struct {
	Type            *string          `json:"type"`
	Seq             *int64           `json:"seq"`
	Time            *int64           `json:"time"`
	Data            *json.RawMessage `json:"data"`
	SourceEventSeqs []int64          `json:"sourceEventSeqs"`
	SurfaceOp       json.RawMessage  `json:"surfaceOp"`
	Ignorable       bool             `json:"ignorable"`
}

type packedLine struct {
	Type  string `json:"type"`
	Seq0  *int64 `json:"seq0"`
	Time0 *int64 `json:"time0"`
	Data  *struct {
		Turn  *int      `json:"turn"`
		Step  *int      `json:"step"`
		Index *int      `json:"index"`
		Dt    []int64   `json:"dt"`
		Texts *[]string `json:"texts"`
		Args  *[]string `json:"args"`
		ID    *string   `json:"id"`
		Name  *string   `json:"name"`
	} `json:"data"`
}

// ParseSession decodes the bytes of a session log named file (session.jsonl
// or a child's) of the recording rec as [Load] does: header, events, packed
// rows expanded, within the default bound of a line, UTF-8; a defect names
// rec, file, line and field. A writer parses what it is about to write with
// it (a refresh's projection files).
func ParseSession(rec, file string, data []byte) (Header, []Event, error) {
	lr := &lineReader{r: bufio.NewReader(bytes.NewReader(data)), rec: rec, file: file, max: Bounds{}.WithDefaults().MaxLineBytes}
	h, events, err := parseSession(rec, lr)
	if err != nil && file != SessionFile {
		err = retarget(err, file)
	}
	return h, events, err
}

// parseSession decodes a session log streamed by lr: header, events,
// packed rows expanded. Errors name session.jsonl ([retarget] names a
// child's log).
func parseSession(rec string, lr *lineReader) (Header, []Event, error) {
	first, err := lr.next()
	if errors.Is(err, io.EOF) {
		return Header{}, nil, sessionError(rec, 1, "", "empty log: missing session header")
	}
	if err != nil {
		return Header{}, nil, err
	}
	h, err := parseHeader(rec, first)
	if err != nil {
		return h, nil, err
	}
	var events []Event
	next := int64(-1)
	up := newShapeUpgrader(h.ID)
	for {
		ln, err := lr.next()
		if errors.Is(err, io.EOF) {
			return h, events, nil
		}
		if err != nil {
			return h, nil, err
		}
		exp, err := parseLine(rec, ln, lr.n, !lr.eol, next, up)
		if err != nil {
			return h, nil, err
		}
		next = exp[len(exp)-1].Seq + 1
		events = append(events, exp...)
	}
}

// parseLine decodes line lineNo of a session log (last: it is the last,
// without a newline): one event, or the members of a packed row, whose
// seq must continue from next (-1: any).
func parseLine(rec string, ln []byte, lineNo int, last bool, next int64, up *shapeUpgrader) ([]Event, error) {
	if len(bytes.TrimSpace(ln)) == 0 {
		return nil, sessionError(rec, lineNo, "", "empty line inside the log")
	}
	var probe struct {
		Type *string `json:"type"`
	}
	if err := json.Unmarshal(ln, &probe); err != nil {
		e := jsonError(rec, SessionFile, ln, lineNo, err)
		if last {
			e.Problem = "truncated last line (no newline): " + e.Problem
		}
		return nil, e
	}
	if probe.Type == nil {
		return nil, sessionError(rec, lineNo, "type", "missing")
	}
	typ := *probe.Type
	if member, ok := packedRows[typ]; ok {
		exp, err := expandPacked(rec, ln, lineNo, member)
		if err != nil {
			return nil, err
		}
		for _, e := range exp {
			if next >= 0 && e.Seq != next {
				return nil, sessionError(rec, lineNo, "seq0", "want %d (seq is contiguous), got %d", next, exp[0].Seq)
			}
			next = e.Seq + 1
		}
		return exp, nil
	}
	e, err := parseEvent(rec, typ, ln, lineNo, next, up)
	if err != nil {
		return nil, err
	}
	return []Event{e}, nil
}

// sessionError is an [*Error] on line lineNo of the recording's session log.
func sessionError(rec string, lineNo int, field, format string, args ...any) error {
	return &Error{Recording: rec, File: SessionFile, Line: lineNo, Field: field, Problem: fmt.Sprintf(format, args...)}
}

// parseHeader decodes the session header, the log's first line.
func parseHeader(rec string, line []byte) (Header, error) {
	var h Header
	if err := json.Unmarshal(line, &h); err != nil {
		return h, jsonError(rec, SessionFile, line, 1, err)
	}
	if h.Type != "session" {
		return h, sessionError(rec, 1, "type", "want \"session\" (the header line), got %q", h.Type)
	}
	return h, formatVersion(rec, h.Version)
}

// FormatVersion is the one session-log format a recording may be in:
// upstream's rc.8 SESSION_FORMAT_VERSION, which its session persistence
// alone reads.
const FormatVersion = 0

// formatVersion refuses a log in another format, as upstream's persistence
// refuses to resume one (naming the direction): a newer harness wrote it,
// or no upgrade path exists for an older one.
func formatVersion(rec string, v int) error {
	switch {
	case v > FormatVersion:
		return sessionError(rec, 1, "version", "log format v%d, but upstream's rc.8 (and this replay) reads only v%d: the log was written by a newer harness", v, FormatVersion)
	case v < FormatVersion:
		return sessionError(rec, 1, "version", "log format v%d, older than the supported v%d, with no upgrade path", v, FormatVersion)
	}
	return nil
}

// parseEvent decodes line lineNo, an event of a known type typ whose seq
// must be next (any seq when next is -1), read in the current shape (up
// upgrades the earlier one; nil: a record outside a session log, where
// the earlier shape is refused), checking the fields its type's view
// requires.
func parseEvent(rec, typ string, ln []byte, lineNo int, next int64, up *shapeUpgrader) (Event, error) {
	switch {
	case up != nil && refusedLegacy[typ]:
		return Event{}, sessionError(rec, lineNo, "type", "unsupported legacy %s event (upstream's session persistence refuses to load a log holding one)", typ)
	case !EventTypes[typ] && (up == nil || typ != kindSteeringMessage):
		return Event{}, sessionError(rec, lineNo, "type", "unknown event type %q", typ)
	}
	var raw rawLine
	if err := json.Unmarshal(ln, &raw); err != nil {
		return Event{}, jsonError(rec, SessionFile, ln, lineNo, err)
	}
	switch {
	case raw.Seq == nil:
		return Event{}, sessionError(rec, lineNo, "seq", "missing")
	case raw.Data == nil:
		return Event{}, sessionError(rec, lineNo, "data", "missing")
	case next >= 0 && *raw.Seq != next:
		return Event{}, sessionError(rec, lineNo, "seq", "want %d (seq is contiguous), got %d", next, *raw.Seq)
	}
	typ, data, earlier, err := up.upgrade(rec, lineNo, typ, *raw.Seq, *raw.Data, raw.SurfaceOp)
	if err != nil {
		return Event{}, err
	}
	if mk, ok := views[typ]; ok {
		v, req := mk()
		wrapped := struct {
			Data any `json:"data"`
		}{Data: v}
		if err := json.Unmarshal(append(append([]byte(`{"data":`), data...), '}'), &wrapped); err != nil {
			return Event{}, jsonError(rec, SessionFile, ln, lineNo, err)
		}
		if m := req(v); m != "" {
			return Event{}, sessionError(rec, lineNo, m[:bytes.IndexByte([]byte(m), 0)], "missing (required in %s)", typ)
		}
	}
	if err := up.fold(rec, lineNo, typ, *raw.Seq, raw.SurfaceOp); err != nil {
		return Event{}, err
	}
	var t int64
	if raw.Time != nil {
		t = *raw.Time
	}
	return Event{Type: typ, Seq: *raw.Seq, Time: t, Data: data, Line: lineNo, SurfaceOp: raw.SurfaceOp, Earlier: earlier}, nil
}

// expandPacked turns one packed row into one assistant/chunk per member.
func expandPacked(rec string, ln []byte, lineNo int, member string) ([]Event, error) {
	var p packedLine
	if err := json.Unmarshal(ln, &p); err != nil {
		return nil, jsonError(rec, SessionFile, ln, lineNo, err)
	}
	switch {
	case p.Seq0 == nil:
		return nil, sessionError(rec, lineNo, "seq0", "missing (required in packed row %s)", p.Type)
	case p.Data == nil:
		return nil, sessionError(rec, lineNo, "data", "missing")
	case p.Data.Turn == nil:
		return nil, sessionError(rec, lineNo, "data.turn", "missing")
	case p.Data.Step == nil:
		return nil, sessionError(rec, lineNo, "data.step", "missing")
	case p.Data.Index == nil:
		return nil, sessionError(rec, lineNo, "data.index", "missing")
	}
	var members []string
	field := "data.texts"
	if member == "tool-call-delta" {
		field = "data.args"
		if p.Data.Args == nil {
			return nil, sessionError(rec, lineNo, field, "missing (required in tool-call-chunks)")
		}
		if p.Data.ID == nil {
			return nil, sessionError(rec, lineNo, "data.id", "missing (required in tool-call-chunks)")
		}
		members = *p.Data.Args
	} else {
		if p.Data.Texts == nil {
			return nil, sessionError(rec, lineNo, field, "missing (required in %s)", p.Type)
		}
		members = *p.Data.Texts
	}
	if len(members) == 0 {
		return nil, sessionError(rec, lineNo, field, "empty (a packed row has at least one member)")
	}
	if len(p.Data.Dt) != len(members)-1 {
		return nil, sessionError(rec, lineNo, "data.dt", "has %d gaps but %s has %d members (want one gap fewer)", len(p.Data.Dt), field, len(members))
	}
	var t int64
	if p.Time0 != nil {
		t = *p.Time0
	}
	out := make([]Event, 0, len(members))
	for k, m := range members {
		if k > 0 {
			t += p.Data.Dt[k-1]
		}
		chunk := map[string]any{"type": member, "index": *p.Data.Index}
		switch member {
		case "tool-call-delta":
			chunk["id"] = *p.Data.ID
			if p.Data.Name != nil {
				chunk["name"] = *p.Data.Name
			}
			chunk["argumentsDelta"] = m
		default:
			chunk["text"] = m
		}
		d, err := json.Marshal(map[string]any{"turn": *p.Data.Turn, "step": *p.Data.Step, "chunk": chunk})
		if err != nil {
			return nil, sessionError(rec, lineNo, "data", "%v", err)
		}
		out = append(out, Event{Type: session.KindAssistantChunk, Seq: *p.Seq0 + int64(k), Time: t, Data: d, Line: lineNo})
	}
	return out, nil
}
