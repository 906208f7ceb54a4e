package compaction

import (
	"context"
	"encoding/json"
	"errors"
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
	l := recordingLog(t)
	l.Append(session.KindRequestHeader, json.RawMessage(`{"header":{"config":{"provider":"","model":"m"}}}`))
	p, _ := Resolve(Config{})
	calls := 0
	if retry, warn := NewEngine(p).Overflow(context.Background(), l, CodeContextWindowExceeded, summarizer(&calls, Summary{}, nil)); retry || warn != nil || calls != 0 {
		t.Errorf("retry %v, warning %v, %d calls", retry, warn, calls)
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
	} {
		l := recordingLog(t)
		p, _ := Resolve(tc.cfg)
		var got Input
		NewEngine(p).Overflow(context.Background(), l, CodeContextWindowExceeded, func(_ context.Context, in Input) (Summary, error) {
			got = in
			return Summary{}, errors.New("stop")
		})
		if got.Target != tc.want || got.MaxTokens != 8192 || len(got.Events) != 1 || !strings.Contains(string(got.Events[0].Data), "aaaa") {
			t.Errorf("summary input %+v, want target %v", got, tc.want)
		}
	}
}
