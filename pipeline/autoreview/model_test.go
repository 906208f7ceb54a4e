package autoreview_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/dshsim/dshsim/harness"
	"github.com/dshsim/dshsim/pipeline/autoreview"
)

func TestParseVerdict(t *testing.T) {
	tests := []struct {
		reply string
		want  autoreview.Verdict
		err   string
	}{
		{`{"verdict":"approve","risk":"low","rationale":"Reads one file."}`, autoreview.Verdict{Approve: true, Risk: "low", Rationale: "Reads one file."}, ""},
		{" ```json\n{\"verdict\":\"reject\",\"risk\":\"high\",\"rationale\":\" Deletes the home directory. \"}\n```\n", autoreview.Verdict{Risk: "high", Rationale: "Deletes the home directory."}, ""},
		{"```\n{\"verdict\":\"reject\",\"risk\":\"medium\",\"rationale\":\"r\"}\n```", autoreview.Verdict{Risk: "medium", Rationale: "r"}, ""},
		{"Sure! I approve.", autoreview.Verdict{}, "reviewer reply is not a JSON object: invalid character 'S' looking for beginning of value"},
		{"```json\n{}", autoreview.Verdict{}, "reviewer reply: unterminated ``` fence"},
		{`{"verdict":"approve","risk":"low","rationale":"x"} and more`, autoreview.Verdict{}, "reviewer reply: text after the JSON object"},
		{`{"risk":"low","rationale":"x"}`, autoreview.Verdict{}, `reviewer reply: field "verdict" is missing`},
		{`{"verdict":"yes","risk":"low","rationale":"x"}`, autoreview.Verdict{}, `reviewer reply: field "verdict" is "yes", want "approve" or "reject"`},
		{`{"verdict":"approve","rationale":"x"}`, autoreview.Verdict{}, `reviewer reply: field "risk" is missing`},
		{`{"verdict":"approve","risk":"none","rationale":"x"}`, autoreview.Verdict{}, `reviewer reply: field "risk" is "none", want "low", "medium" or "high"`},
		{`{"verdict":"approve","risk":"low","rationale":"  "}`, autoreview.Verdict{}, `reviewer reply: field "rationale" is missing or empty`},
		{`{"verdict":"approve","risk":"low"}`, autoreview.Verdict{}, `reviewer reply: field "rationale" is missing or empty`},
	}
	for _, tc := range tests {
		got, err := autoreview.ParseVerdict(tc.reply)
		msg := ""
		if err != nil {
			msg = err.Error()
		}
		if msg != tc.err || got != tc.want {
			t.Errorf("ParseVerdict(%q) = %+v, %q; want %+v, %q", tc.reply, got, msg, tc.want, tc.err)
		}
	}
}

func TestPrompt(t *testing.T) {
	s := autoreview.Subject{Agent: "root", Tool: "bash", CallID: "call-1", Args: json.RawMessage(`{"command":"rm -rf build","workdir":"."}`), Reason: "hook: deletes files"}
	harness.Golden(t, "testdata", "prompt.txt", []byte(autoreview.Prompt(s)))
}

// TestModelReviewer: a model client plugs in as a completion function; its
// reply is parsed, and a transport error or an unparsable reply is an error.
func TestModelReviewer(t *testing.T) {
	s := autoreview.Subject{Agent: "root", Tool: "write", CallID: "c1", Args: json.RawMessage(`{}`), Reason: autoreview.AskReason}
	var prompt string
	m := autoreview.ModelReviewer{Complete: func(ctx context.Context, p string) (string, error) {
		prompt = p
		return `{"verdict":"approve","risk":"low","rationale":"fine"}`, nil
	}}
	v, err := m.Review(context.Background(), s)
	if err != nil || !v.Approve || prompt != autoreview.Prompt(s) {
		t.Fatalf("verdict %+v, %v; prompt sent %q", v, err, prompt)
	}
	for _, tc := range []struct {
		m    autoreview.ModelReviewer
		want string
	}{
		{autoreview.ModelReviewer{}, "model reviewer: no completion function"},
		{autoreview.ModelReviewer{Complete: func(context.Context, string) (string, error) { return "", errors.New("429 rate limited") }}, "model reviewer: 429 rate limited"},
		{autoreview.ModelReviewer{Complete: func(context.Context, string) (string, error) { return "approve", nil }}, "reviewer reply is not a JSON object: invalid character 'a' looking for beginning of value"},
	} {
		if _, err := tc.m.Review(context.Background(), s); err == nil || err.Error() != tc.want {
			t.Errorf("error %v, want %q", err, tc.want)
		}
	}
}
