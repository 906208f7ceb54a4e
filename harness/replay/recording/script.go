package recording

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/dshsim/dshsim/pipeline/session"
)

// ToolCall is one tool call of a model reply (from a block-end tool-call block).
type ToolCall struct {
	// ID is the model's call id.
	ID string `json:"id"`
	// Name is the tool name.
	Name string `json:"name"`
	// Arguments is the raw JSON argument string as the model produced it.
	Arguments string `json:"arguments"`
}

// Block is one finished content block of a reply, in block index order.
type Block struct {
	// Index is the block index.
	Index int `json:"-"`
	// Type is text, reasoning or tool-call.
	Type string `json:"type"`
	// Text is the text of a text or reasoning block.
	Text string `json:"text,omitempty"`
	// ID, Name and Arguments are set on a tool-call block.
	ID        string `json:"id,omitempty"`
	Name      string `json:"name,omitempty"`
	Arguments string `json:"arguments,omitempty"`
}

// Reply is one model call of the script.
type Reply struct {
	// Turn and Step locate the call in the recorded session.
	Turn, Step int
	// Line is the session.jsonl line of the finish chunk (0 for override entries).
	Line int
	// Blocks are the finished blocks in index order.
	Blocks []Block
	// ToolCalls are the tool-call blocks in index order.
	ToolCalls []ToolCall
	// Usage is the usage chunk payload, nil when the reply had none.
	Usage json.RawMessage
	// Finish is the finish reason kind (stop, tool-calls, max-tokens, ...).
	Finish string
	// Failure is the failure of an error finish ({message, code, ...}), nil otherwise.
	Failure json.RawMessage
	// Throw is set when an override entry makes this call fail after its chunks.
	Throw *Throw
	// Hang is set when an override entry streams a partial text and then
	// waits for the prompt to be cancelled.
	Hang *Hang
	// Chunks are the streamed chunks in order, as the model would send them.
	Chunks []map[string]any
}

// Hang is an override entry that hangs until cancelled.
type Hang struct {
	// ReadyFile is written (relative to the workspace) once the partial
	// text is out; "" writes nothing.
	ReadyFile string
}

// HangChunks are what a hanging replay model streams before it waits:
// upstream's llm-replay yields a text block start and the delta "partial".
var HangChunks = []map[string]any{
	{"type": "block-start", "index": 0, "blockType": "text"},
	{"type": "text-delta", "index": 0, "text": "partial"},
}

// Throw is an override entry's failure.
type Throw struct {
	// Message and Code describe the LlmError.
	Message, Code string
}

// Script is the ordered model replies of one recording.
type Script struct {
	// Replies are served in order, one per model call.
	Replies []Reply
	// Overridden reports that replay.override.json changed the derived script.
	Overridden bool
	// Title are the title model's replies (sessionTitleLlm): the override
	// file's entries, in order.
	Title []Reply
}

// Derive rebuilds the script from the recording's assistant/chunk events and
// applies replay.override.json; with a title model (sessionTitleLlm) the
// override file is that model's script instead, as upstream's title replay
// takes it.
func Derive(r *Recording) (*Script, error) {
	s := &Script{}
	override := r.Override
	if override != nil && r.Settings.SessionTitleLLM != nil {
		title, err := override.apply(r.Name, nil)
		if err != nil {
			return nil, err
		}
		s.Title, override = title, nil
	}
	if override != nil && override.Replace != nil {
		// a whole replacement script: the recorded stream is not the script
		// (it may end inside a stream, as a cancelled hang does)
		replies, err := override.apply(r.Name, nil)
		if err != nil {
			return nil, err
		}
		s.Replies, s.Overridden = replies, true
		return s, nil
	}
	derived, err := deriveEvents(r.Name, r.Events)
	if err != nil {
		return nil, err
	}
	s.Replies = derived.Replies
	if override != nil {
		replies, err := override.apply(r.Name, s.Replies)
		if err != nil {
			return nil, err
		}
		s.Replies, s.Overridden = replies, true
	}
	return s, nil
}

// deriveEvents derives the replies of one log's events (a child's own part
// of its log, or the primary's): one reply per finish chunk.
func deriveEvents(rec string, events []Event) (*Script, error) {
	s := &Script{}
	var cur []chunkAt
	curTurn, curStep := -1, -1
	for _, e := range events {
		if e.Type == session.KindCompactionSummary {
			if len(cur) > 0 {
				return nil, sessionError(rec, e.Line, "type", "a compaction's summary inside the model stream of turn %d step %d (it has no finish chunk before it)", curTurn, curStep)
			}
			reply, ok, err := summaryReply(rec, e)
			if err != nil {
				return nil, err
			}
			if ok {
				s.Replies = append(s.Replies, reply)
			}
			continue
		}
		if e.Type != session.KindAssistantChunk {
			continue
		}
		var d struct {
			Turn  int            `json:"turn"`
			Step  int            `json:"step"`
			Chunk map[string]any `json:"chunk"`
		}
		if err := decodeNumbers(e.Data, &d, false); err != nil {
			return nil, jsonError(rec, SessionFile, e.Data, e.Line, err)
		}
		plainNumbers(d.Chunk)
		if len(cur) > 0 && (d.Turn != curTurn || d.Step != curStep) {
			return nil, sessionError(rec, e.Line, "data.step", "model stream of turn %d step %d ended without a finish chunk (a thrown stream: needs %s)", curTurn, curStep, OverrideFile)
		}
		curTurn, curStep = d.Turn, d.Step
		cur = append(cur, chunkAt{line: e.Line, chunk: d.Chunk})
		if typ, _ := d.Chunk["type"].(string); typ == "finish" {
			reply, err := buildReply(rec, SessionFile, cur)
			if err != nil {
				return nil, err
			}
			reply.Turn, reply.Step = d.Turn, d.Step
			s.Replies = append(s.Replies, reply)
			cur = nil
		}
	}
	if len(cur) > 0 {
		return nil, sessionError(rec, cur[len(cur)-1].line, "data.chunk", "the log ends inside a model stream (turn %d step %d has no finish chunk; needs %s)", curTurn, curStep, OverrideFile)
	}
	return s, nil
}

// summaryReply is the model call a compaction/summary marked as one
// (llmStreamCall true) records: a stream of its rawOutput's blocks (a
// block-start and a block-end each), its usage, a stop finish, as the
// model answered the summary call; ok is false for a summary made
// without a model call. A marked call without its rawOutput, or with a
// block that is not one, is an error naming the field.
func summaryReply(rec string, e Event) (Reply, bool, error) {
	var d struct {
		LLMStreamCall *bool              `json:"llmStreamCall"`
		RawOutput     *[]json.RawMessage `json:"rawOutput"`
		Usage         json.RawMessage    `json:"usage"`
	}
	wrapped := struct {
		Data any `json:"data"`
	}{&d}
	if err := json.Unmarshal([]byte(`{"data":`+string(e.Data)+`}`), &wrapped); err != nil {
		return Reply{}, false, jsonError(rec, SessionFile, e.Data, e.Line, err)
	}
	if d.LLMStreamCall == nil || !*d.LLMStreamCall {
		return Reply{}, false, nil
	}
	if d.RawOutput == nil {
		return Reply{}, false, sessionError(rec, e.Line, "data.rawOutput", "missing (required when data.llmStreamCall is true: the summary call's output)")
	}
	var cs []chunkAt
	for i, raw := range *d.RawOutput {
		var block map[string]any
		if err := json.Unmarshal(raw, &block); err != nil {
			return Reply{}, false, sessionError(rec, e.Line, fmt.Sprintf("data.rawOutput[%d]", i), "want a content block (an object), got %s", raw)
		}
		typ, _ := block["type"].(string)
		pair := []chunkAt{{line: e.Line, chunk: map[string]any{"type": "block-start", "index": float64(i), "blockType": typ}},
			{line: e.Line, chunk: map[string]any{"type": "block-end", "index": float64(i), "block": block}}}
		if _, err := buildReply(rec, SessionFile, pair); err != nil {
			if re, ok := err.(*Error); ok {
				re.Field = strings.Replace(re.Field, "data.chunk.block", fmt.Sprintf("data.rawOutput[%d]", i), 1)
			}
			return Reply{}, false, err
		}
		cs = append(cs, pair...)
	}
	if len(d.Usage) > 0 {
		var u map[string]any
		if err := json.Unmarshal(d.Usage, &u); err != nil || u == nil {
			return Reply{}, false, sessionError(rec, e.Line, "data.usage", "want an object (the summary call's usage), got %s", d.Usage)
		}
		cs = append(cs, chunkAt{line: e.Line, chunk: map[string]any{"type": "usage", "usage": u}})
	}
	cs = append(cs, chunkAt{line: e.Line, chunk: map[string]any{"type": "finish", "reason": map[string]any{"kind": "stop"}}})
	reply, err := buildReply(rec, SessionFile, cs)
	return reply, err == nil, err
}

type chunkAt struct {
	line  int
	chunk map[string]any
}

func buildReply(rec, file string, chunks []chunkAt) (Reply, error) {
	var r Reply
	for _, c := range chunks {
		r.Chunks = append(r.Chunks, c.chunk)
		fail := func(field, format string, args ...any) error {
			return &Error{Recording: rec, File: file, Line: c.line, Field: field, Problem: fmt.Sprintf(format, args...)}
		}
		typ, _ := c.chunk["type"].(string)
		switch typ {
		case "block-start", "text-delta", "reasoning-delta", "tool-call-delta":
		case "block-end":
			idx, ok := c.chunk["index"].(float64)
			if !ok {
				return r, fail("data.chunk.index", "want number, got %s", show(c.chunk["index"]))
			}
			block, ok := c.chunk["block"].(map[string]any)
			if !ok {
				return r, fail("data.chunk.block", "want object, got %s", show(c.chunk["block"]))
			}
			b := Block{Index: int(idx)}
			b.Type, _ = block["type"].(string)
			switch b.Type {
			case "text", "reasoning":
				t, ok := block["text"].(string)
				if !ok {
					return r, fail("data.chunk.block.text", "want string, got %s", show(block["text"]))
				}
				b.Text = t
			case "tool-call":
				for _, f := range []struct {
					key string
					dst *string
				}{{"id", &b.ID}, {"name", &b.Name}, {"arguments", &b.Arguments}} {
					v, ok := block[f.key].(string)
					if !ok {
						return r, fail("data.chunk.block."+f.key, "want string, got %s", show(block[f.key]))
					}
					*f.dst = v
				}
			default:
				return r, fail("data.chunk.block.type", "unknown block type %q", b.Type)
			}
			r.Blocks = append(r.Blocks, b)
		case "usage":
			u, err := json.Marshal(c.chunk["usage"])
			if err != nil {
				return r, fail("data.chunk.usage", "%v", err)
			}
			r.Usage = u
		case "finish":
			reason, ok := c.chunk["reason"].(map[string]any)
			if !ok {
				return r, fail("data.chunk.reason", "want object, got %s", show(c.chunk["reason"]))
			}
			kind, ok := reason["kind"].(string)
			if !ok {
				return r, fail("data.chunk.reason.kind", "want string, got %s", show(reason["kind"]))
			}
			r.Finish = kind
			r.Line = c.line
			if f, ok := reason["failure"]; ok && kind == "error" {
				r.Failure, _ = json.Marshal(f)
			}
		default:
			return r, fail("data.chunk.type", "unknown chunk type %q", typ)
		}
	}
	sort.SliceStable(r.Blocks, func(i, j int) bool { return r.Blocks[i].Index < r.Blocks[j].Index })
	for _, b := range r.Blocks {
		if b.Type == "tool-call" {
			r.ToolCalls = append(r.ToolCalls, ToolCall{ID: b.ID, Name: b.Name, Arguments: b.Arguments})
		}
	}
	return r, nil
}

// Override is replay.override.json: either a whole replacement script or
// patches replacing (or, at index len, appending) single calls.
type Override struct {
	// Replace, when non-nil, replaces the whole script.
	Replace []OverrideEntry
	// Patches replace call At (At == len appends).
	Patches []Patch
}

// Patch replaces one call of the script.
type Patch struct {
	// At is the 0-based call index.
	At int `json:"at"`
	// Entry is the replacement.
	Entry OverrideEntry `json:"entry"`
}

// OverrideEntry is one scripted call: kind chunks, throw or hang.
type OverrideEntry struct {
	// Kind is chunks, throw or hang.
	Kind string `json:"kind"`
	// Chunks are the streamed chunks (chunks, throw).
	Chunks []map[string]any `json:"chunks,omitempty"`
	// Message and Code describe the thrown LlmError (throw).
	Message string `json:"message,omitempty"`
	Code    string `json:"code,omitempty"`
	// ReadyFile is written when a hang starts (hang).
	ReadyFile string `json:"readyFile,omitempty"`
}

func parseOverride(rec string, data []byte) (*Override, error) {
	o := &Override{}
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) > 0 && trimmed[0] == '[' {
		if err := decodeNumbers(data, &o.Replace, true); err != nil {
			return nil, jsonError(rec, OverrideFile, data, 0, err)
		}
		if o.Replace == nil {
			o.Replace = []OverrideEntry{}
		}
		for _, e := range o.Replace {
			plainChunks(e.Chunks)
		}
	} else {
		var p struct {
			Patches []Patch `json:"patches"`
		}
		if err := decodeNumbers(data, &p, true); err != nil {
			return nil, jsonError(rec, OverrideFile, data, 0, err)
		}
		if p.Patches == nil {
			return nil, &Error{Recording: rec, File: OverrideFile, Line: 1, Field: "patches", Problem: "missing (want a bare entry array or {patches:[{at, entry}]})"}
		}
		o.Patches = p.Patches
		for _, p := range o.Patches {
			plainChunks(p.Entry.Chunks)
		}
	}
	check := func(field string, e OverrideEntry) error {
		switch e.Kind {
		case "chunks", "throw":
			return nil
		case "hang":
			if e.ReadyFile != "" && !filepath.IsLocal(e.ReadyFile) {
				return &Error{Recording: rec, File: OverrideFile, Line: lineOfKey(data, "readyFile"), Field: field + ".readyFile", Problem: fmt.Sprintf("want a path inside the workspace, got %q", e.ReadyFile)}
			}
			return nil
		}
		return &Error{Recording: rec, File: OverrideFile, Line: lineOfValue(data, e.Kind), Field: field + ".kind", Problem: fmt.Sprintf("want chunks, throw or hang, got %q", e.Kind)}
	}
	for i, e := range o.Replace {
		if err := check(fmt.Sprintf("[%d]", i), e); err != nil {
			return nil, err
		}
	}
	for i, p := range o.Patches {
		if err := check(fmt.Sprintf("patches[%d].entry", i), p.Entry); err != nil {
			return nil, err
		}
	}
	return o, nil
}

func (o *Override) apply(rec string, replies []Reply) ([]Reply, error) {
	toReply := func(field string, e OverrideEntry) (Reply, error) {
		if e.Kind == "hang" {
			return Reply{Hang: &Hang{ReadyFile: e.ReadyFile}, Chunks: HangChunks}, nil
		}
		cs := make([]chunkAt, len(e.Chunks))
		for i, c := range e.Chunks {
			cs[i] = chunkAt{chunk: c}
		}
		r, err := buildReply(rec, OverrideFile, cs)
		if err != nil {
			if re, ok := err.(*Error); ok {
				re.Field = field + ".chunks"
			}
			return r, err
		}
		if e.Kind == "throw" {
			r.Throw = &Throw{Message: e.Message, Code: e.Code}
		}
		return r, nil
	}
	if o.Replace != nil {
		out := make([]Reply, 0, len(o.Replace))
		for i, e := range o.Replace {
			r, err := toReply(fmt.Sprintf("[%d]", i), e)
			if err != nil {
				return nil, err
			}
			out = append(out, r)
		}
		return out, nil
	}
	out := append([]Reply(nil), replies...)
	for i, p := range o.Patches {
		field := fmt.Sprintf("patches[%d]", i)
		r, err := toReply(field+".entry", p.Entry)
		if err != nil {
			return nil, err
		}
		switch {
		case p.At >= 0 && p.At < len(out):
			out[p.At] = r
		case p.At == len(out):
			out = append(out, r)
		default:
			return nil, &Error{Recording: rec, File: OverrideFile, Line: 0, Field: field + ".at", Problem: fmt.Sprintf("index %d is out of range (the script has %d calls)", p.At, len(out))}
		}
	}
	return out, nil
}

// decodeNumbers decodes data into v with every number of an interface value
// a json.Number (see plainNumbers); strict rejects unknown fields and
// trailing data.
func decodeNumbers(data []byte, v any, strict bool) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if strict {
		dec.DisallowUnknownFields()
	}
	if err := dec.Decode(v); err != nil {
		return err
	}
	if strict && dec.More() {
		return errors.New("trailing data after the JSON value")
	}
	return nil
}

// plainNumbers makes a chunk's numbers what JSON.parse makes of them, in
// place: a float64 (-0 included), except a number beyond a float64's range
// (1e999, -1e999: Infinity to JavaScript), which stays the json.Number of
// its text, so that it is streamed exactly as written and refused by the
// log, as upstream's log refuses a non-finite number.
func plainNumbers(v any) any {
	switch t := v.(type) {
	case json.Number:
		f, err := strconv.ParseFloat(t.String(), 64)
		if err != nil || math.IsInf(f, 0) {
			return t
		}
		return f
	case map[string]any:
		for k, e := range t {
			t[k] = plainNumbers(e)
		}
	case []any:
		for i, e := range t {
			t[i] = plainNumbers(e)
		}
	}
	return v
}

func plainChunks(chunks []map[string]any) {
	for _, c := range chunks {
		plainNumbers(c)
	}
}
