package delegation_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/pipeline/delegation"
	"github.com/dshsim/dshsim/pipeline/session"
)

func TestStopReasonOfAndHeadline(t *testing.T) {
	for _, tc := range []struct {
		kind     string
		reason   delegation.StopReason
		headline string
		settled  string
	}{
		{"completed", "completed", "", "finished and will do no further work unless you send it more."},
		{"aborted", "aborted", "subagent run was cancelled", "was stopped before it finished."},
		{"interrupted", "aborted", "subagent run was cancelled", "was stopped before it finished."},
		{"error", "error", "subagent run failed", "failed before it finished."},
		{"max-tokens", "max-tokens", "subagent run hit its token limit before finishing", "ran out of room before it finished."},
		{"blocked", "refusal", "subagent declined the task", "declined the task."},
		{"", "error", "subagent run failed", "failed before it finished."},
	} {
		r := delegation.StopReasonOf(tc.kind)
		if r != tc.reason || delegation.Headline(r) != tc.headline {
			t.Errorf("%q: %q, %q; want %q, %q", tc.kind, r, delegation.Headline(r), tc.reason, tc.headline)
		}
		if got := delegation.SettlementSummary("C", r); got != "Background subagent C "+tc.settled {
			t.Errorf("%q: summary %q", tc.kind, got)
		}
	}
	odd := delegation.StopReason("paused")
	if delegation.Headline(odd) != "subagent run ended abnormally (paused)" || delegation.SettlementSummary("C", odd) != "Background subagent C ended abnormally (paused) before it finished." {
		t.Errorf("other reason: %q / %q", delegation.Headline(odd), delegation.SettlementSummary("C", odd))
	}
}

func raws(s ...string) []json.RawMessage {
	var out []json.RawMessage
	for _, x := range s {
		out = append(out, json.RawMessage(x))
	}
	return out
}

func TestRunFailure(t *testing.T) {
	out := raws(`{"type":"reasoning","text":"thinking"}`, `{"type":"text","text":"partial "}`, `{"type":"text","text":"text"}`)
	for _, tc := range []struct {
		diag   string
		output []json.RawMessage
		want   string
	}{
		{"", nil, "subagent run failed"},
		{"boom", nil, "subagent run failed\nDiagnostic: boom"},
		{"boom", out, "subagent run failed\nDiagnostic: boom\nPartial output before the run ended:\npartial text"},
		{"", raws(`{"type":"reasoning","text":"only reasoning"}`), "subagent run failed"},
	} {
		if got := delegation.RunFailure(delegation.StopError, tc.diag, tc.output); got != tc.want {
			t.Errorf("RunFailure(%q) = %q, want %q", tc.diag, got, tc.want)
		}
	}
	if got := delegation.JobDetail(delegation.StopError, "d"); got != "error; diagnostic: d" {
		t.Errorf("JobDetail = %q", got)
	}
	if got := delegation.JobDetail(delegation.StopMaxTokens, ""); got != "max-tokens" {
		t.Errorf("JobDetail without diagnostic = %q", got)
	}
}

func ev(typ, data string) session.Event { return session.Event{Type: typ, Data: json.RawMessage(data)} }

func TestSelectOutput(t *testing.T) {
	msg := func(content string) session.Event {
		return ev("assistant/message", `{"turn":1,"step":1,"message":{"role":"assistant","content":`+content+`}}`)
	}
	delta := func(text string) session.Event {
		return ev("assistant/chunk", `{"chunk":{"type":"text-delta","index":0,"text":"`+text+`"}}`)
	}
	for _, tc := range []struct {
		name   string
		events []session.Event
		want   string
	}{
		{"nothing", nil, ""},
		{"the last non-empty message", []session.Event{msg(`[{"type":"text","text":"first"}]`), msg(`[{"type":"reasoning","text":"r"},{"type":"text","text":"SECOND_OK"}]`)}, `[{"type":"reasoning","text":"r"},{"type":"text","text":"SECOND_OK"}]`},
		{"an empty message (usage after max-tokens) keeps the earlier", []session.Event{msg(`[{"type":"text","text":"partial"}]`), msg(`[]`)}, `[{"type":"text","text":"partial"}]`},
		{"no message: the streamed text", []session.Event{delta("par"), delta("tial")}, `[{"type":"text","text":"partial"}]`},
	} {
		got, _ := json.Marshal(delegation.SelectOutput(tc.events))
		if tc.want == "" && string(got) != "null" || tc.want != "" && string(got) != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
}

func TestForkPrefixAndLastTurnEnd(t *testing.T) {
	evs := []session.Event{ev("turn/start", `{"turn":1}`), ev("turn/end", `{"turn":1,"reason":{"kind":"completed"}}`), ev("turn/start", `{"turn":2}`), ev("tool/call", `{}`)}
	if got := delegation.ForkPrefix(evs); len(got) != 2 || got[1].Type != "turn/end" {
		t.Errorf("ForkPrefix = %v, want the completed turn only", got)
	}
	if got := delegation.ForkPrefix(evs[:1]); got != nil {
		t.Errorf("ForkPrefix before any turn ended = %v, want nil", got)
	}
	if got := delegation.LastTurnEnd(evs); got != "completed" {
		t.Errorf("LastTurnEnd = %q", got)
	}
	if got := delegation.LastTurnEnd(evs[:1]); got != "" {
		t.Errorf("LastTurnEnd without an end = %q", got)
	}
}

func TestNoticeAndReportContent(t *testing.T) {
	enc := func(v []json.RawMessage) string { b, _ := json.Marshal(v); return string(b) }
	if got := enc(delegation.SettlementContent("S", nil)); got != `[{"type":"text","text":"S"},{"type":"text","text":"It left no closing message."}]` {
		t.Errorf("no closing message: %s", got)
	}
	if got := enc(delegation.SettlementContent("S", raws(`{"type":"text","text":"SECOND_OK"}`))); got != `[{"type":"text","text":"S"},{"type":"text","text":"Its closing message:"},{"type":"text","text":"SECOND_OK"}]` {
		t.Errorf("closing message: %s", got)
	}
	if got := enc(delegation.ReportContent("C", "CHILD_REPORT_OK")); got != `[{"type":"text","text":"Background subagent C reported:"},{"type":"text","text":"CHILD_REPORT_OK"}]` {
		t.Errorf("report: %s", got)
	}
}

func TestDescriptors(t *testing.T) {
	enc := func(d delegation.Descriptor) string { b, _ := json.Marshal(d); return string(b) }
	if got := enc(delegation.OneShotDescriptor("spawn", "Reply with CHILD_OK")); got != `{"version":2,"mode":"one-shot","provider":"spawn","label":"Reply with CHILD_OK"}` {
		t.Errorf("one-shot: %s", got)
	}
	if got := enc(delegation.OneShotDescriptor("spawn", "")); got != `{"version":2,"mode":"one-shot","provider":"spawn"}` {
		t.Errorf("workflow child: %s", got)
	}
	got := enc(delegation.ContinuableDescriptor("spawn", "L", delegation.Route{Provider: "deepseek-official", Model: "deepseek-v4-flash"}, "", &pipeline.Filter{Deny: []string{"bash"}}))
	if got != `{"version":2,"mode":"continuable","provider":"spawn","label":"L","agentProvider":"deepseek-official","agentModel":"deepseek-v4-flash","toolFilter":{"deny":["bash"]}}` {
		t.Errorf("continuable: %s", got)
	}
	if !strings.HasPrefix(enc(delegation.ContinuableDescriptor("fork", "L", delegation.Route{}, "", nil)), `{"version":2,"mode":"continuable","provider":"fork","label":"L"}`) {
		t.Error("continuable without a route")
	}
}
