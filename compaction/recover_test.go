package compaction

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/dshsim/dshsim/pipeline/session"
)

// TestOverflow: the context-overflow recovery's rules, each with the
// decision it makes and the compactions it leaves in the log.
func TestOverflow(t *testing.T) {
	ok := Summary{Summary: []json.RawMessage{summaryText}, RawOutput: []json.RawMessage{summaryText}}
	appendMessage := func(l *session.Log) {
		l.AppendWith(session.KindAssistantMessage, assistant(0, 0).Data, session.AppendOptions{SurfaceOp: "append"})
	}
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tc := range []struct {
		name        string
		cfg         Config
		code        string
		ctx         context.Context
		between     func(*session.Log) // between two overflows (nil: one overflow)
		fail        error
		retry       []bool // each overflow's decision
		compactions int
		warn        string
	}{
		{"an overflow compacts and retries", Config{}, CodeContextWindowExceeded, nil, nil, nil, []bool{true}, 1, ""},
		{"another failure code", Config{}, "SERVER", nil, nil, nil, []bool{false}, 0, ""},
		{"auto off", Config{Auto: new(bool)}, CodeContextWindowExceeded, nil, nil, nil, []bool{false}, 0, ""},
		{"a cancelled turn", Config{}, CodeContextWindowExceeded, cancelled, nil, nil, []bool{false}, 0, ""},
		{"maxOverflowRetries 0", Config{MaxOverflowRetries: n(0)}, CodeContextWindowExceeded, nil, nil, nil, []bool{false}, 0, ""},
		{"a second overflow before any message", Config{}, CodeContextWindowExceeded, nil, func(*session.Log) {}, nil, []bool{true, false}, 1, ""},
		{"a second overflow after a message", Config{}, CodeContextWindowExceeded, nil, appendMessage, nil, []bool{true, true}, 2, ""},
		{"maxOverflowRetries 2", Config{MaxOverflowRetries: n(2)}, CodeContextWindowExceeded, nil, func(*session.Log) {}, nil, []bool{true, true}, 2, ""},
		{"a second overflow in the next turn", Config{}, CodeContextWindowExceeded, nil, func(l *session.Log) {
			l.Append(session.KindTurnEnd, map[string]any{"turn": 1, "reason": map[string]string{"kind": "completed"}})
			l.Append(session.KindTurnStart, map[string]any{"turn": 2})
		}, nil, []bool{true, true}, 2, ""},
		{"a failed summary keeps the failure", Config{}, CodeContextWindowExceeded, nil, nil, errors.New("model down"), []bool{false}, 1, "context-overflow compaction failed: model down; preserving the original request error"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := recordingLog(t)
			p, err := Resolve(tc.cfg)
			if err != nil {
				t.Fatal(err)
			}
			e := NewEngine(p)
			ctx := tc.ctx
			if ctx == nil {
				ctx = context.Background()
			}
			calls := 0
			for i, want := range tc.retry {
				if i > 0 {
					tc.between(l)
					// a second overflow: the conversation grew again
					l.AppendWith(session.KindUserMessage, user(0, 1032).Data, session.AppendOptions{SurfaceOp: "append"})
				}
				got, warn := e.Overflow(ctx, l, tc.code, summarizer(&calls, ok, tc.fail))
				if got != want {
					t.Errorf("overflow %d: retry %v, want %v (%v)", i+1, got, want, warn)
				}
				if tc.warn != "" && (warn == nil || warn.Error() != tc.warn) {
					t.Errorf("overflow %d: warning %v, want %q", i+1, warn, tc.warn)
				}
			}
			events, _ := l.Events()
			starts := 0
			for _, ev := range events {
				if ev.Type == session.KindCompactionStart {
					starts++
				}
			}
			if starts != tc.compactions {
				t.Errorf("%d compactions, want %d", starts, tc.compactions)
			}
			if tc.compactions > 0 && tc.fail == nil && calls != tc.compactions {
				t.Errorf("%d summary calls, want %d", calls, tc.compactions)
			}
		})
	}
}

// TestOverflowNeedsARoute: a session with no routed request (no request
// header naming a provider and model) is never compacted.
func TestOverflowNeedsARoute(t *testing.T) {
	for _, header := range []string{`{"header":{"config":{"provider":"","model":"m"}}}`, `{"header":{"config":{"provider":"p","model":""}}}`} {
		l := recordingLog(t)
		l.Append(session.KindRequestHeader, json.RawMessage(header))
		p, _ := Resolve(Config{})
		calls := 0
		if retry, warn := NewEngine(p).Overflow(context.Background(), l, CodeContextWindowExceeded, summarizer(&calls, Summary{}, nil)); retry || warn != nil || calls != 0 {
			t.Errorf("%s: retry %v, warning %v, %d calls", header, retry, warn, calls)
		}
	}
}

// TestOverflowDuringTheSummary: what happens while the summary is made
// decides the retry as upstream's listener does: a turn cancelled
// meanwhile never retries (even after a committed compaction; a failure
// says cancellation prevents it); a surface replaced meanwhile (durable
// progress) retries even though this compaction failed.
func TestOverflowDuringTheSummary(t *testing.T) {
	ok := Summary{Summary: []json.RawMessage{summaryText}, RawOutput: []json.RawMessage{summaryText}}
	replaceResult := func(l *session.Log) {
		// another writer replaces the result (seq 4): durable progress,
		// and a changed surface for this compaction
		l.AppendWith(session.KindUserMessage, user(0, 4).Data, session.AppendOptions{SurfaceOp: replaceOp{"replace", 4, 4}})
	}
	for _, tc := range []struct {
		name    string
		cancel  bool
		replace bool
		retry   bool
		warn    string
	}{
		{"cancelled: the committed compaction is not retried", true, false, false, ""},
		{"surface progress: retried despite the failure", false, true, true, "context-overflow compaction failed after durable surface progress: compaction: session surface changed during summarization; retrying from the replacement surface"},
		{"cancelled after surface progress: not retried", true, true, false, "context-overflow compaction failed: compaction: session surface changed during summarization; cancellation prevents retry"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := recordingLog(t)
			p, _ := Resolve(Config{})
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			retry, warn := NewEngine(p).Overflow(ctx, l, CodeContextWindowExceeded, func(context.Context, Input) (Summary, error) {
				if tc.replace {
					replaceResult(l)
				}
				if tc.cancel {
					cancel()
				}
				return ok, nil
			})
			if retry != tc.retry || (tc.warn == "") != (warn == nil) || (warn != nil && warn.Error() != tc.warn) {
				t.Errorf("retry %v, warning %v; want %v, %q", retry, warn, tc.retry, tc.warn)
			}
		})
	}
}

// TestOverflowSummaryTarget: the summary call takes the policy's route
// when set, else the conversation's, with the policy's cap.
func TestOverflowSummaryTarget(t *testing.T) {
	for _, tc := range []struct {
		cfg  Config
		want Target
	}{
		{Config{}, Target{"deepseek-official", "deepseek-v4-flash"}},
		{Config{SummarizationProvider: s("aux"), SummarizationModel: s("small")}, Target{"aux", "small"}},
		{Config{MaxTokens: n(100)}, Target{"deepseek-official", "deepseek-v4-flash"}},
	} {
		l := recordingLog(t)
		p, _ := Resolve(tc.cfg)
		var got Input
		NewEngine(p).Overflow(context.Background(), l, CodeContextWindowExceeded, func(_ context.Context, in Input) (Summary, error) {
			got = in
			return Summary{}, errors.New("stop")
		})
		if got.Target != tc.want || got.MaxTokens != p.MaxTokens || len(got.Events) != 1 || !strings.Contains(string(got.Events[0].Data), "aaaa") {
			t.Errorf("summary input %+v, want target %v", got, tc.want)
		}
	}
}

// TestOverflowKeepsNoTail: the recovery keeps no priced tail (retainTokens
// 0): behind a last node priced 0 (an assistant message without content)
// it compacts the whole balanced head, the call and its result included.
func TestOverflowKeepsNoTail(t *testing.T) {
	l := recordingLog(t)
	l.AppendWith(session.KindAssistantMessage, emptyAssistant(0).Data, session.AppendOptions{SurfaceOp: "append"})
	p, _ := Resolve(Config{})
	var in Input
	retry, warn := NewEngine(p).Overflow(context.Background(), l, CodeContextWindowExceeded, func(_ context.Context, got Input) (Summary, error) {
		in = got
		return Summary{Summary: []json.RawMessage{summaryText}, RawOutput: []json.RawMessage{summaryText}}, nil
	})
	var seqs []int64
	for _, e := range in.Events {
		seqs = append(seqs, e.Seq)
	}
	if !retry || warn != nil || !slices.Equal(seqs, []int64{2, 3, 4}) {
		t.Errorf("retry %v, warning %v, compacted %v; want 2, 3, 4", retry, warn, seqs)
	}
}
