package compaction

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/dshsim/dshsim/pipeline/session"
	"github.com/dshsim/dshsim/pipeline/session/sessiontest"
)

var summaryText = json.RawMessage(`{"type":"text","text":"The request established a durable compaction premise."}`)

// TestSummaryOf: the summary call's output as upstream checks it.
func TestSummaryOf(t *testing.T) {
	image := json.RawMessage(`{"type":"image","attachment":{}}`)
	reasoning := json.RawMessage(`{"type":"reasoning","text":"think"}`)
	blank := json.RawMessage(`{"type":"text","text":" \n\t"}`)
	for _, tc := range []struct {
		name string
		out  Output
		code string // the CodedError's code ("": another error)
		err  string
		want []json.RawMessage
	}{
		{"text", Output{Blocks: []json.RawMessage{summaryText}, Finish: "stop"}, "", "", []json.RawMessage{summaryText}},
		{"reasoning is raw output, not summary", Output{Blocks: []json.RawMessage{reasoning, summaryText}, Finish: "stop"}, "", "", []json.RawMessage{summaryText}},
		{"an error finish fails with the call's failure", Output{Finish: "error", Failure: json.RawMessage(`{"message":"boom","code":"SERVER"}`)}, "SERVER", "boom", nil},
		{"an aborted finish too", Output{Finish: "aborted", Failure: json.RawMessage(`{"message":"cancelled","code":"ABORTED"}`)}, "ABORTED", "cancelled", nil},
		{"max-tokens: a truncated checkpoint", Output{Blocks: []json.RawMessage{summaryText}, Finish: "max-tokens"}, "MAX_TOKENS", "truncated at the token cap", nil},
		{"an image", Output{Blocks: []json.RawMessage{summaryText, image}, Finish: "stop"}, "UNSUPPORTED_CONTENT", "cannot contain image output", nil},
		{"blank text only", Output{Blocks: []json.RawMessage{blank}, Finish: "stop"}, "", "no text summary content", nil},
		{"no blocks", Output{Finish: "stop"}, "", "no text summary content", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := SummaryOf(tc.out, Target{"p", "m"}, 32)
			if tc.err != "" {
				var ce *CodedError
				if err == nil || !strings.Contains(err.Error(), tc.err) || (tc.code != "") != errors.As(err, &ce) || (ce != nil && ce.Code != tc.code) {
					t.Fatalf("SummaryOf = %v, want %q (code %q)", err, tc.err, tc.code)
				}
				return
			}
			if err != nil || len(got.Summary) != len(tc.want) || string(got.Summary[0]) != string(tc.want[0]) || len(got.RawOutput) != len(tc.out.Blocks) || got.MaxTokens != 32 {
				t.Errorf("SummaryOf = %+v, %v", got, err)
			}
		})
	}
}

// appender appends an event of a type, data and surfaceOp to l, failing
// the test on an error.
func appender(t *testing.T, l *session.Log) func(typ string, data any, op any) {
	return func(typ string, data any, op any) {
		t.Helper()
		if _, err := l.AppendWith(typ, data, session.AppendOptions{SurfaceOp: op}); err != nil {
			t.Fatal(err)
		}
	}
}

// recordingLog is the recording's conversation up to the overflow: the
// prompt (266 tokens), the bash call and its result, in an open turn under
// a routed request header.
func recordingLog(t *testing.T) *session.Log {
	t.Helper()
	l := sessiontest.New(t, "s", "/w")
	app := appender(t, l)
	app(session.KindTurnStart, map[string]int{"turn": 1}, nil)
	app(session.KindRequestHeader, json.RawMessage(`{"header":{"config":{"provider":"deepseek-official","model":"deepseek-v4-flash"}},"reason":"initial"}`), nil)
	for _, e := range []session.Event{user(0, 1032), assistant(0, 1), result(0)} {
		app(e.Type, e.Data, "append")
	}
	return l
}

func summarizer(calls *int, s Summary, err error) Summarize {
	return func(_ context.Context, in Input) (Summary, error) {
		*calls++
		s.Target, s.MaxTokens = in.Target, in.MaxTokens
		return s, err
	}
}

// TestCompactRegion: the transaction's events in order, and each refusal
// or failure (no open turn, a compaction already open, a summary not
// smaller than the range, a failed summary call) with what it leaves.
func TestCompactRegion(t *testing.T) {
	ok := Summary{Summary: []json.RawMessage{summaryText}, RawOutput: []json.RawMessage{summaryText}, Usage: json.RawMessage(`{"inputTokens":20,"outputTokens":4}`)}
	// the framing costs 102 tokens beside the summary's own text: 656
	// units make the checkpoint 266 tokens, as many as the range; 652 one
	// fewer
	units := func(n int) Summary {
		b := json.RawMessage(`{"type":"text","text":"` + strings.Repeat("x", n) + `"}`)
		return Summary{Summary: []json.RawMessage{b}, RawOutput: []json.RawMessage{b}}
	}
	for _, tc := range []struct {
		name   string
		before func(*session.Log)
		sum    Summary
		fail   error
		types  []string // the events appended
		err    string
	}{
		{"committed", nil, ok, nil, []string{session.KindCompactionStart, session.KindCompactionSummary, session.KindUserMessage, session.KindCompactionEnd}, ""},
		{"a checkpoint priced as the range", nil, units(656), nil, []string{session.KindCompactionStart, session.KindCompactionEnd}, "summary is not smaller than the shadowed content (266 estimated framed tokens >= 266)"},
		{"a checkpoint one token below the range", nil, units(652), nil, []string{session.KindCompactionStart, session.KindCompactionSummary, session.KindUserMessage, session.KindCompactionEnd}, ""},
		{"a failed summary call", nil, ok, errors.New("model down"), []string{session.KindCompactionStart, session.KindCompactionEnd}, "model down"},
		{"no open turn", func(l *session.Log) {
			l.Append(session.KindTurnEnd, map[string]any{"turn": 1, "reason": map[string]string{"kind": "completed"}})
		}, ok, nil, nil, "no open turn"},
		{"a compaction open", func(l *session.Log) {
			l.Append(session.KindCompactionStart, map[string]any{"compactionId": "x", "turn": 1})
		}, ok, nil, nil, "compaction already in progress"},
		{"an open compaction of an earlier lifecycle", func(l *session.Log) {
			l.Append(session.KindCompactionStart, map[string]any{"compactionId": "x", "turn": 1})
			l.Append(session.KindEndSeed, map[string]any{})
		}, ok, nil, []string{session.KindCompactionStart, session.KindCompactionSummary, session.KindUserMessage, session.KindCompactionEnd}, ""},
		{"an open compaction after the last end-seed", func(l *session.Log) {
			l.Append(session.KindEndSeed, map[string]any{})
			l.Append(session.KindCompactionStart, map[string]any{"compactionId": "x", "turn": 1})
		}, ok, nil, nil, "compaction already in progress"},
		{"an open compaction before the latest of two end-seeds", func(l *session.Log) {
			l.Append(session.KindEndSeed, map[string]any{})
			l.Append(session.KindCompactionStart, map[string]any{"compactionId": "x", "turn": 1})
			l.Append(session.KindEndSeed, map[string]any{})
		}, ok, nil, []string{session.KindCompactionStart, session.KindCompactionSummary, session.KindUserMessage, session.KindCompactionEnd}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := recordingLog(t)
			if tc.before != nil {
				tc.before(l)
			}
			before, _ := l.Events()
			calls := 0
			res, err := CompactRegion(context.Background(), l, 2, 2, func(ctx context.Context, in Input) (Summary, error) {
				return summarizer(&calls, tc.sum, tc.fail)(ctx, in)
			})
			after, _ := l.Events()
			var types []string
			for _, e := range after[len(before):] {
				types = append(types, e.Type)
			}
			if !slices.Equal(types, tc.types) {
				t.Errorf("appended %v, want %v", types, tc.types)
			}
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("CompactRegion = %v, want %q", err, tc.err)
				}
				if len(types) == 2 && !strings.Contains(string(after[len(after)-1].Data), `"error":`) {
					t.Errorf("the failure's compaction/end carries no error: %s", after[len(after)-1].Data)
				}
				return
			}
			if err != nil || res.ShadowedTokenCount != 266 || !slices.Equal(res.ShadowedSeqs, []int64{2}) {
				t.Fatalf("CompactRegion = %+v, %v", res, err)
			}
			if tc.name == "committed" {
				checkCommitted(t, after[len(after)-4:], res)
			}
		})
	}
}

// TestCompactRegionOfSeveralNodes: a range of several nodes is replaced
// whole (the checkpoint's surfaceOp spans it), priced as their sum, and
// the summary call reads each of its events in surface order.
func TestCompactRegionOfSeveralNodes(t *testing.T) {
	l := recordingLog(t)
	var in Input
	res, err := CompactRegion(context.Background(), l, 2, 4, func(_ context.Context, got Input) (Summary, error) {
		in = got
		return Summary{Summary: []json.RawMessage{summaryText}, RawOutput: []json.RawMessage{summaryText}}, nil
	})
	if err != nil || !slices.Equal(res.ShadowedSeqs, []int64{2, 3, 4}) || res.ShadowedTokenCount != 266+15+14 {
		t.Fatalf("CompactRegion = %+v, %v", res, err)
	}
	var seqs []int64
	for _, e := range in.Events {
		seqs = append(seqs, e.Seq)
	}
	if !slices.Equal(seqs, []int64{2, 3, 4}) {
		t.Errorf("the summary read events %v, want 2, 3, 4", seqs)
	}
	events, _ := l.Events()
	cp := events[len(events)-2]
	if string(cp.SurfaceOp) != `{"op":"replace","start":2,"end":4}` || !slices.Equal(cp.SourceEventSeqs, []int64{res.StartSeq, res.SummarySeq, 2, 3, 4}) {
		t.Errorf("checkpoint surfaceOp %s, sourceEventSeqs %v", cp.SurfaceOp, cp.SourceEventSeqs)
	}
	s, err := Fold(events)
	if err != nil || !slices.Equal(s.Seqs(), []int64{cp.Seq}) {
		t.Errorf("surface after %v, %v; want the checkpoint alone", s.Seqs(), err)
	}
}

// checkCommitted checks a committed compaction's four events as upstream
// writes them.
func checkCommitted(t *testing.T, evs []session.Event, res *Result) {
	t.Helper()
	id := res.CompactionID
	wantStart := `{"compactionId":"` + id + `","turn":1}`
	if string(evs[0].Data) != wantStart || string(evs[3].Data) != wantStart {
		t.Errorf("start %s, end %s; want %s", evs[0].Data, evs[3].Data, wantStart)
	}
	wantSummary := `{"compactionId":"` + id + `","summary":[` + string(summaryText) + `],"rawOutput":[` + string(summaryText) +
		`],"llmStreamCall":true,"shadowedRange":{"start":2,"end":2},"shadowedSeqs":[2],"shadowedTokenCount":266,"provider":"","model":"","maxTokens":0,"usage":{"inputTokens":20,"outputTokens":4}}`
	if string(evs[1].Data) != wantSummary {
		t.Errorf("summary\n%s\nwant\n%s", evs[1].Data, wantSummary)
	}
	var msg checkpoint
	if err := json.Unmarshal(evs[2].Data, &msg); err != nil || len(msg.Content) != 3 || msg.Source.CompactionID != id || msg.Source.Plugin != "compact" {
		t.Errorf("checkpoint %s: %v", evs[2].Data, err)
	}
	if string(evs[2].SurfaceOp) != `{"op":"replace","start":2,"end":2}` || !slices.Equal(evs[2].SourceEventSeqs, []int64{res.StartSeq, res.SummarySeq, 2}) {
		t.Errorf("checkpoint surfaceOp %s, sourceEventSeqs %v", evs[2].SurfaceOp, evs[2].SourceEventSeqs)
	}
}

// TestCompactRegionRefusesAChangedSurface: a surface that changed while
// the summary was made (a message appended meanwhile) is not replaced;
// the compaction closes with the error.
func TestCompactRegionRefusesAChangedSurface(t *testing.T) {
	l := recordingLog(t)
	_, err := CompactRegion(context.Background(), l, 2, 2, func(context.Context, Input) (Summary, error) {
		l.AppendWith(session.KindUserMessage, user(0, 4).Data, session.AppendOptions{SurfaceOp: "append"})
		return Summary{Summary: []json.RawMessage{summaryText}}, nil
	})
	events, _ := l.Events()
	last := events[len(events)-1]
	if err == nil || !strings.Contains(err.Error(), "session surface changed during summarization") ||
		last.Type != session.KindCompactionEnd || !strings.Contains(string(last.Data), "surface changed") {
		t.Fatalf("CompactRegion = %v, last event %s %s", err, last.Type, last.Data)
	}
}
