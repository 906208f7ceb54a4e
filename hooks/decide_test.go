package hooks

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/dshsim/dshsim/pipeline"
)

// The codec of one run (upstream's hp/codec.ts).
func TestDecode(t *testing.T) {
	pre := `{"hookSpecificOutput":{"hookEventName":"PreToolUse",`
	tests := []struct {
		name           string
		point          Point
		exit           *int
		stdout, stderr string
		want           output
		logged         string
	}{
		{"exit 0, nothing", PreToolUse, intp(0), "", "", output{}, "pass"},
		{"exit 0, plain text", PreToolUse, intp(0), "all good", "", output{}, "pass"},
		{"exit 2 blocks with stderr", PreToolUse, intp(2), "", "  no way\n", output{decision: "block", reason: "no way"}, "block"},
		{"exit 2, blank stderr: block without reason", PreToolUse, intp(2), "", " \n\t", output{decision: "block"}, "block"},
		{"exit 2 never reads stdout JSON", PreToolUse, intp(2), pre + `"permissionDecision":"allow"}}`, "x", output{decision: "block", reason: "x"}, "block"},
		{"exit 1 decides nothing", PreToolUse, intp(1), `{"decision":"block"}`, "boom", output{}, "pass"},
		{"exit 127 decides nothing", PreToolUse, intp(127), "", "bash: nope: command not found", output{}, "pass"},
		{"no exit code decides nothing", PreToolUse, nil, `{"decision":"block"}`, "", output{}, "pass"},
		{"top-level block", PreToolUse, intp(0), `{"decision":"block","reason":"r"}`, "", output{decision: "block", reason: "r"}, "block"},
		{"top-level approve", PostToolUse, intp(0), `{"decision":"approve"}`, "", output{decision: "approve"}, "approve"},
		{"top-level deny, allow, ask, maybe are ignored", PreToolUse, intp(0), `{"decision":"deny","reason":"kept"}`, "", output{reason: "kept"}, "pass"},
		{"top-level ask ignored", PreToolUse, intp(0), `{"decision":"ask"}`, "", output{}, "pass"},
		{"permissionDecision deny", PreToolUse, intp(0), pre + `"permissionDecision":"deny","permissionDecisionReason":"pd"}}`, "", output{decision: "deny", reason: "pd"}, "deny"},
		{"permissionDecision ask", PreToolUse, intp(0), pre + `"permissionDecision":"ask"}}`, "", output{decision: "ask"}, "ask"},
		{"permissionDecision allow", PreToolUse, intp(0), pre + `"permissionDecision":"allow"}}`, "", output{decision: "allow"}, "allow"},
		{"permissionDecision overrides decision and reason", PreToolUse, intp(0), `{"decision":"block","reason":"top",` + pre[1:] + `"permissionDecision":"allow","permissionDecisionReason":"inner"}}`, "", output{decision: "allow", reason: "inner"}, "allow"},
		{"unknown permissionDecision keeps the top level", PreToolUse, intp(0), `{"decision":"block",` + pre[1:] + `"permissionDecision":"maybe"}}`, "", output{decision: "block"}, "block"},
		{"mismatched hookEventName drops the block but keeps the top level", PreToolUse, intp(0), `{"decision":"block","reason":"top","continue":false,"hookSpecificOutput":{"hookEventName":"PostToolUse","permissionDecision":"allow","additionalContext":"c"}}`, "", output{decision: "block", reason: "top", stopped: true}, "block"},
		{"missing hookEventName drops the block", PreToolUse, intp(0), `{"hookSpecificOutput":{"permissionDecision":"deny"}}`, "", output{}, "pass"},
		{"continue false without decision logs stop", PreToolUse, intp(0), `{"continue":false,"stopReason":"enough"}`, "", output{stopped: true, stopReason: "enough"}, "stop"},
		{"explicit decision beats stop", PreToolUse, intp(0), `{"continue":false,"decision":"approve"}`, "", output{decision: "approve", stopped: true}, "approve"},
		{"additionalContext and updatedInput", PostToolUse, intp(0), `{"hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"ctx","updatedInput":{"a":1}}}`, "", output{additionalContext: "ctx", updatedInput: true}, "pass"},
		{"updatedInput that is not an object is ignored", PreToolUse, intp(0), pre + `"updatedInput":"x"}}`, "", output{}, "pass"},
		{"systemMessage", PreToolUse, intp(0), `{"systemMessage":"hi"}`, "", output{systemMessage: "hi"}, "pass"},
		{"wrong-typed fields are ignored one by one", PreToolUse, intp(0), `{"decision":5,"reason":"r","continue":"no","systemMessage":1}`, "", output{reason: "r"}, "pass"},
		{"malformed JSON is ignored", PreToolUse, intp(0), `{"decision":"block"`, "", output{}, "pass"},
		{"an array is ignored", PreToolUse, intp(0), `[1,2,3]`, "", output{}, "pass"},
		{"stdout is trimmed (JavaScript whitespace, BOM included)", PreToolUse, intp(0), "\ufeff \n" + `{"decision":"block"}`, "", output{decision: "block"}, "block"},
		{"U+0085 is not whitespace for trim()", PreToolUse, intp(2), "", "\u0085x", output{decision: "block", reason: "\u0085x"}, "block"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := decode(tt.point, tt.exit, tt.stdout, tt.stderr)
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(output{})); diff != "" {
				t.Errorf("decode (-want +got):\n%s", diff)
			}
			if got.logged() != tt.logged {
				t.Errorf("logged decision %q, want %q", got.logged(), tt.logged)
			}
		})
	}
}

func TestMerge(t *testing.T) {
	tests := []struct {
		name string
		outs []output
		want merged
	}{
		{"empty is none", nil, merged{}},
		{"deny beats ask beats allow, any order", []output{{decision: "allow"}, {decision: "deny", reason: "d"}, {decision: "ask", reason: "a"}}, merged{rank: 3, reason: "d"}},
		{"block folds to deny; reasons of the winning rank joined", []output{{decision: "block", reason: "one"}, {decision: "ask", reason: "a"}, {decision: "deny", reason: "two"}, {decision: "block"}}, merged{rank: 3, reason: "one\n\ntwo"}},
		{"ask reason surfaces when ask wins", []output{{decision: "allow", reason: "x"}, {decision: "ask", reason: "why"}}, merged{rank: 2, reason: "why"}},
		{"allow reasons are never collected", []output{{decision: "allow", reason: "x"}, {decision: "approve", reason: "y"}}, merged{rank: 1}},
		{"contexts in order, empties skipped, whatever the decision", []output{{additionalContext: "a"}, {decision: "block", additionalContext: ""}, {additionalContext: "b"}}, merged{rank: 3, contexts: []string{"a", "b"}}},
		{"first continue:false is sticky", []output{{stopped: true, stopReason: "first"}, {stopped: true, stopReason: "second"}}, merged{stopped: true, stopReason: "first"}},
		{"system messages collected", []output{{systemMessage: "s1"}, {systemMessage: ""}, {systemMessage: "s2"}}, merged{systemMessages: []string{"s1", "s2"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, merge(tt.outs), cmp.AllowUnexported(merged{})); diff != "" {
				t.Errorf("merge (-want +got):\n%s", diff)
			}
		})
	}
}

// Every PreToolUse decision of both dialects onto the pipeline, as upstream
// maps them.
func TestPreDecisionMapping(t *testing.T) {
	tests := []struct {
		name    string
		d       *Dialect
		m       merged
		want    pipeline.Decision
		decided bool
	}{
		{"claude-code deny with reasons", ClaudeCode, merged{rank: 3, reason: "a\n\nb"}, pipeline.Deny("a\n\nb"), true},
		{"claude-code deny without reason", ClaudeCode, merged{rank: 3}, pipeline.Deny("blocked by PreToolUse hook"), true},
		{"claude-code ask with reason", ClaudeCode, merged{rank: 2, reason: "sure?"}, pipeline.Ask("sure?"), true},
		{"claude-code ask without reason", ClaudeCode, merged{rank: 2}, pipeline.Ask(""), true},
		{"claude-code allow delegates", ClaudeCode, merged{rank: 1}, pipeline.Decision{}, false},
		{"claude-code none delegates", ClaudeCode, merged{}, pipeline.Decision{}, false},
		{"claude-code stop and context have no effect", ClaudeCode, merged{stopped: true, contexts: []string{"c"}}, pipeline.Decision{}, false},
		{"codex deny with reason", Codex, merged{rank: 3, reason: "nope"}, pipeline.Deny("nope"), true},
		{"codex deny without reason", Codex, merged{rank: 3}, pipeline.Deny("blocked by PreToolUse hook"), true},
		{"codex ask delegates (effectively allow)", Codex, merged{rank: 2, reason: "sure?"}, pipeline.Decision{}, false},
		{"codex allow delegates", Codex, merged{rank: 1}, pipeline.Decision{}, false},
		{"codex none delegates", Codex, merged{}, pipeline.Decision{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, decided := preDecision(tt.d, tt.m)
			if decided != tt.decided {
				t.Fatalf("decided = %v, want %v", decided, tt.decided)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("decision (-want +got):\n%s", diff)
			}
		})
	}
}

// Every PostToolUse decision of both dialects onto the pipeline, as upstream
// maps them.
func TestPostDecisionMapping(t *testing.T) {
	downstreamBlock := pipeline.PostDecision{Kind: pipeline.PostBlock, Feedback: []pipeline.Block{pipeline.TextBlock("inner")},
		ContextMessages: []pipeline.ContextMessage{{Plugin: "hooks-codex", Texts: []string{"cx"}}}}
	replace := pipeline.PostDecision{Kind: pipeline.PostAccept, Content: []pipeline.Block{pipeline.TextBlock("replaced")}}
	tests := []struct {
		name       string
		d          *Dialect
		m          merged
		downstream pipeline.PostDecision
		want       pipeline.PostDecision
		nextRuns   bool
	}{
		{"claude-code block with reason: feedback verbatim, next skipped", ClaudeCode, merged{rank: 3, reason: "tool output rejected"}, pipeline.Accept(),
			pipeline.PostDecision{Kind: pipeline.PostBlock, Feedback: []pipeline.Block{pipeline.TextBlock("tool output rejected")}}, false},
		{"claude-code block without reason", ClaudeCode, merged{rank: 3}, pipeline.Accept(),
			pipeline.PostDecision{Kind: pipeline.PostBlock, Feedback: []pipeline.Block{pipeline.TextBlock("blocked by PostToolUse hook")}}, false},
		{"codex block without reason", Codex, merged{rank: 3}, pipeline.Accept(),
			pipeline.PostDecision{Kind: pipeline.PostBlock, Feedback: []pipeline.Block{pipeline.TextBlock("blocked by PostToolUse hook")}}, false},
		{"block and context: one message of the plugin", ClaudeCode, merged{rank: 3, reason: "bad", contexts: []string{"c1", "c2"}}, pipeline.Accept(),
			pipeline.PostDecision{Kind: pipeline.PostBlock, Feedback: []pipeline.Block{pipeline.TextBlock("bad")}, ContextMessages: []pipeline.ContextMessage{{Plugin: "hooks-claude-code", Texts: []string{"c1", "c2"}}}}, false},
		{"codex context is the codex plugin's", Codex, merged{contexts: []string{"note"}}, pipeline.Accept(),
			pipeline.PostDecision{Kind: pipeline.PostAccept, ContextMessages: []pipeline.ContextMessage{{Plugin: "hooks-codex", Texts: []string{"note"}}}}, true},
		{"none: downstream unchanged", ClaudeCode, merged{}, replace, replace, true},
		{"ask and allow mean nothing after the call", ClaudeCode, merged{rank: 2, reason: "x"}, pipeline.Accept(), pipeline.Accept(), true},
		{"allow delegates", Codex, merged{rank: 1}, pipeline.Accept(), pipeline.Accept(), true},
		{"context folds onto a downstream replacement", ClaudeCode, merged{contexts: []string{"c"}}, replace,
			pipeline.PostDecision{Kind: pipeline.PostAccept, Content: replace.Content, ContextMessages: []pipeline.ContextMessage{{Plugin: "hooks-claude-code", Texts: []string{"c"}}}}, true},
		{"context folds onto a downstream block, bridge first", ClaudeCode, merged{contexts: []string{"cc"}}, downstreamBlock,
			pipeline.PostDecision{Kind: pipeline.PostBlock, Feedback: downstreamBlock.Feedback, ContextMessages: []pipeline.ContextMessage{{Plugin: "hooks-claude-code", Texts: []string{"cc"}}, {Plugin: "hooks-codex", Texts: []string{"cx"}}}}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ran := false
			got, err := postDecision(tt.d, tt.m, func() (pipeline.PostDecision, error) { ran = true; return tt.downstream, nil })
			if err != nil {
				t.Fatal(err)
			}
			if ran != tt.nextRuns {
				t.Errorf("next ran = %v, want %v", ran, tt.nextRuns)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("decision (-want +got):\n%s", diff)
			}
		})
	}
	boom := errors.New("inner failed")
	if _, err := postDecision(ClaudeCode, merged{contexts: []string{"c"}}, func() (pipeline.PostDecision, error) { return pipeline.PostDecision{}, boom }); !errors.Is(err, boom) {
		t.Errorf("an inner error must pass through, got %v", err)
	}
}

func TestStderrSummary(t *testing.T) {
	x600 := strings.Repeat("x", 600)
	tests := []struct {
		name string
		in   string
		max  int
		want string
	}{
		{"empty is omitted", " \n", 500, ""},
		{"trimmed", "  hi\n", 500, "hi"},
		{"exactly 500 kept whole", x600[:500], 500, x600[:500]},
		{"501 cut to 500 plus ellipsis", x600[:501], 500, x600[:500] + "…"},
		{"600 cut", x600, 500, x600[:500] + "…"},
		{"cap 40", x600, 40, x600[:40] + "…"},
		{"UTF-16 units: an astral character counts two", "😀😀", 3, "😀\uFFFD…"},
	}
	for _, tt := range tests {
		if got := summary(tt.in, tt.max); got != tt.want {
			t.Errorf("%s: got %q (%d), want %q", tt.name, got, len([]rune(got)), tt.want)
		}
	}
}

func TestTimeouts(t *testing.T) {
	tests := []struct {
		name        string
		sec         *float64
		def, wantMs float64
		wantRun     bool
	}{
		{"seconds to milliseconds", f64p(3), DefaultTimeoutMs, 3000, true},
		{"fractions", f64p(0.5), DefaultTimeoutMs, 500, true},
		{"default when unset", nil, DefaultTimeoutMs, 600000, true},
		{"configured default", nil, 1234, 1234, true},
		{"capped at ten minutes", f64p(3600), DefaultTimeoutMs, 600000, true},
		{"zero never starts", f64p(0), DefaultTimeoutMs, 0, false},
		{"negative never starts", f64p(-1), DefaultTimeoutMs, -1000, false},
		{"negative zero never starts", f64p(negZero()), DefaultTimeoutMs, 0, false},
		{"non-positive default never starts", nil, 0, 0, false},
		{"infinite never starts", f64p(inf()), DefaultTimeoutMs, inf(), false},
		{"a fraction of a millisecond starts", f64p(0.0005), DefaultTimeoutMs, 0.5, true},
	}
	for _, tt := range tests {
		ms, ok := timeoutMs(Hook{TimeoutSec: tt.sec}, tt.def)
		if ok != tt.wantRun || (ok && ms != tt.wantMs) {
			t.Errorf("%s: got %v ms, runs %v; want %v ms, runs %v", tt.name, ms, ok, tt.wantMs, tt.wantRun)
		}
	}
}

func TestEnvironment(t *testing.T) {
	parent := []string{"PATH=/bin", "HOME=/h", "API_KEY=k", "github_token=t", "MyPassword=p", "SECRET_X=s", "DSH_MODE=x", "dsh_lower=y",
		"TERM=xterm", "NO_COLOR=0", "CLAUDE_PROJECT_DIR=/old", "KEYBOARD=us", "LANG=C"}
	tests := []struct {
		name string
		d    *Dialect
		dir  string
		want []string
	}{
		{"claude-code with a project dir", ClaudeCode, "/ws",
			[]string{"PATH=/bin", "HOME=/h", "LANG=C", "NO_COLOR=1", "TERM=dumb", "PAGER=cat", "GIT_PAGER=cat", "CLAUDE_PROJECT_DIR=/ws"}},
		{"claude-code without one keeps the parent's", ClaudeCode, "",
			[]string{"PATH=/bin", "HOME=/h", "CLAUDE_PROJECT_DIR=/old", "LANG=C", "NO_COLOR=1", "TERM=dumb", "PAGER=cat", "GIT_PAGER=cat"}},
		{"codex adds nothing", Codex, "/ws",
			[]string{"PATH=/bin", "HOME=/h", "CLAUDE_PROJECT_DIR=/old", "LANG=C", "NO_COLOR=1", "TERM=dumb", "PAGER=cat", "GIT_PAGER=cat"}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, environment(parent, tt.d, tt.dir)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.name, diff)
		}
	}
}
