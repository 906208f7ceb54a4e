package compaction

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/dshsim/dshsim/pipeline/session"
)

// Surface events of a conversation, by seq: a user message of n text
// units, an assistant message with k tool calls, a tool result.
func user(seq int64, units int) session.Event {
	return session.Event{Type: session.KindUserMessage, Seq: seq, SurfaceOp: json.RawMessage(`"append"`),
		Data: json.RawMessage(fmt.Sprintf(`{"content":[{"type":"text","text":%q}],"source":{"kind":"user"},"role":"user","id":"u"}`, strings.Repeat("a", units)))}
}

func assistant(seq int64, calls int) session.Event {
	blocks := []string{`{"type":"text","text":"ok"}`}
	for i := range calls {
		blocks = append(blocks, fmt.Sprintf(`{"type":"tool-call","id":"c%d","name":"bash","arguments":"{}"}`, i))
	}
	return session.Event{Type: session.KindAssistantMessage, Seq: seq, SurfaceOp: json.RawMessage(`"append"`),
		Data: json.RawMessage(`{"turn":1,"step":1,"message":{"role":"assistant","content":[` + strings.Join(blocks, ",") + `]}}`)}
}

func result(seq int64) session.Event {
	return session.Event{Type: session.KindToolResult, Seq: seq, SurfaceOp: json.RawMessage(`"append"`),
		Data: json.RawMessage(`{"turn":1,"step":1,"message":{"content":[{"type":"tool-result","toolCallId":"c0","content":[{"type":"text","text":"alpha\n"}],"isError":false}],"role":"user"}}`)}
}

// emptyAssistant is an assistant message without content (upstream
// derives no message from it: a node priced 0).
func emptyAssistant(seq int64) session.Event {
	return session.Event{Type: session.KindAssistantMessage, Seq: seq, SurfaceOp: json.RawMessage(`"append"`),
		Data: json.RawMessage(`{"turn":1,"step":1,"message":{"role":"assistant","content":[]}}`)}
}

// opEvent is a user message of 4 units placed by surfaceOp op.
func opEvent(seq int64, op string) session.Event {
	e := user(seq, 4)
	e.SurfaceOp = json.RawMessage(op)
	return e
}

func plain(seq int64, typ string) session.Event {
	return session.Event{Type: typ, Seq: seq, Data: json.RawMessage(`{"turn":1}`)}
}

// TestFold: appends join the tail, a replacement swaps its range for one
// node (counted), events without a surfaceOp stay off, and a replacement
// of nodes that are not current is an error naming its seq.
func TestFold(t *testing.T) {
	replace := func(seq, start, end int64) session.Event {
		e := user(seq, 4)
		e.SurfaceOp = json.RawMessage(fmt.Sprintf(`{"op":"replace","start":%d,"end":%d}`, start, end))
		return e
	}
	offSurface := user(9, 4)
	offSurface.SurfaceOp = nil
	for _, tc := range []struct {
		name   string
		events []session.Event
		seqs   []int64
		tokens int
		repl   int
		err    string
	}{
		{"appends", []session.Event{plain(0, session.KindTurnStart), user(1, 4), assistant(2, 1), result(3)}, []int64{1, 2, 3}, 9 + 15 + 14, 0, ""},
		{"a message without a surfaceOp stays off", []session.Event{user(1, 4), offSurface}, []int64{1}, 9, 0, ""},
		{"a replacement", []session.Event{user(1, 40), user(2, 4), replace(3, 1, 1)}, []int64{3, 2}, 18, 1, ""},
		{"a replacement of a range", []session.Event{user(1, 40), user(2, 4), user(3, 4), replace(4, 1, 2)}, []int64{4, 3}, 18, 1, ""},
		{"a replacement of a node gone", []session.Event{user(1, 4), replace(2, 1, 1), replace(3, 1, 1)}, nil, 0, 0, "seq 3 (user/message): surfaceOp: replace has invalid current range 1-1"},
		{"a reversed range", []session.Event{user(1, 4), user(2, 4), replace(3, 2, 1)}, nil, 0, 0, "invalid current range 2-1"},
		{"an assistant message without content is priced 0", []session.Event{user(1, 4), emptyAssistant(2)}, []int64{1, 2}, 9, 0, ""},
		{"a replace of another op", []session.Event{user(1, 4), opEvent(2, `{"op":"insert","start":1,"end":1}`)}, nil, 0, 0, "seq 2 (user/message): surfaceOp: want"},
		{"a replace with a key more", []session.Event{user(1, 4), opEvent(2, `{"op":"replace","start":1,"end":1,"x":0}`)}, nil, 0, 0, "seq 2 (user/message): surfaceOp: want"},
		{"a replace without its end", []session.Event{user(1, 4), opEvent(2, `{"op":"replace","start":1,"x":1}`)}, nil, 0, 0, "seq 2 (user/message): surfaceOp: want"},
		{"a replace of a negative seq", []session.Event{user(1, 4), opEvent(2, `{"op":"replace","start":-1,"end":1}`)}, nil, 0, 0, "seq 2 (user/message): surfaceOp: want"},
		{"a surfaceOp on an event off the surface", []session.Event{user(1, 4), {Type: session.KindTurnEnd, Seq: 2, SurfaceOp: json.RawMessage(`"append"`), Data: json.RawMessage(`{"turn":1}`)}}, nil, 0, 0, "seq 2 (turn/end): surfaceOp: the event is not surface-eligible"},
		{"an unknown surfaceOp", []session.Event{{Type: session.KindUserMessage, Seq: 1, SurfaceOp: json.RawMessage(`"prepend"`), Data: user(1, 1).Data}}, nil, 0, 0, `want "append" or {op: "replace", start, end}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Fold(tc.events)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("Fold = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || !slices.Equal(s.Seqs(), tc.seqs) || s.Tokens != tc.tokens || s.Replacements != tc.repl {
				t.Errorf("Fold = %v (%d tokens, %d replacements), %v; want %v (%d, %d)", s.Seqs(), s.Tokens, s.Replacements, err, tc.seqs, tc.tokens, tc.repl)
			}
		})
	}
}

// TestSelectRange: the head up to the kept tail, the tail the fewest last
// nodes priced at least retainTokens, moved earlier past an open tool
// call; nothing when the kept tail reaches the head.
func TestSelectRange(t *testing.T) {
	// the recording's surface: the prompt (266 tokens), the assistant's
	// bash call, its result
	rec := []session.Event{user(4, 1033), assistant(13, 1), result(15)}
	for _, tc := range []struct {
		name       string
		events     []session.Event
		retain     int
		start, end int64
		ok         bool
	}{
		{"the recording: no tail kept, the call stays with its result", rec, 0, 4, 4, true},
		{"a tail priced exactly retainTokens is kept alone", []session.Event{user(1, 40), user(2, 4), user(3, 4)}, 9, 1, 2, true},
		{"one token more keeps one node more", []session.Event{user(1, 40), user(2, 4), user(3, 4)}, 10, 1, 1, true},
		{"the tail reaches the head", []session.Event{user(1, 4), user(2, 4)}, 18, 0, 0, false},
		{"an open call up to the head", []session.Event{assistant(1, 1), user(2, 4), result(3)}, 0, 0, 0, false},
		{"two calls, one result: the cut moves before the calls", []session.Event{user(1, 4), assistant(2, 2), result(3), user(4, 4)}, 0, 1, 1, true},
		{"empty", nil, 0, 0, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Fold(tc.events)
			if err != nil {
				t.Fatal(err)
			}
			r, ok, err := SelectRange(s, tc.retain)
			if err != nil || ok != tc.ok || (ok && (r.Start != tc.start || r.End != tc.end)) {
				t.Errorf("SelectRange = %+v, %v, %v; want %d-%d, %v", r, ok, err, tc.start, tc.end, tc.ok)
			}
		})
	}
}

// TestValidateRegion: a range of current nodes in order that splits no
// call from its result at either end; each refusal says which rule.
func TestValidateRegion(t *testing.T) {
	s, err := Fold([]session.Event{user(1, 4), assistant(2, 1), result(3), user(4, 4)})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		start, end int64
		err        string
	}{
		{1, 3, ""},
		{1, 4, ""},
		{4, 4, ""},
		{9, 4, "start seq 9 not found"},
		{1, 9, "end seq 9 not found"},
		{4, 1, "start seq 4 (position 3) is after end seq 1 (position 0)"},
		{2, 1, "start seq 2 (position 1) is after end seq 1 (position 0)"},
		{3, 4, "start seq 3 is not a balanced boundary"},
		{1, 2, "end seq 2 is not a balanced boundary"},
	} {
		r, err := ValidateRegion(s, tc.start, tc.end)
		switch {
		case tc.err == "" && (err != nil || r.Start != tc.start || r.End != tc.end):
			t.Errorf("ValidateRegion(%d, %d) = %+v, %v", tc.start, tc.end, r, err)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("ValidateRegion(%d, %d) = %v, want %q", tc.start, tc.end, err, tc.err)
		}
	}
	bad, err := Fold([]session.Event{user(1, 4), result(2)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ValidateRegion(bad, 1, 1); err == nil || !strings.Contains(err.Error(), "tool/result at surface seq 2 has no matching tool-call") {
		t.Errorf("a result without its call: %v", err)
	}
}
