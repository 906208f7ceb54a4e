package hooks_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/dshsim/dshsim/hooks"
	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/pipeline/session"
)

// promptSubmit runs both bridges' UserPromptSubmit hooks as the agent's
// pre-step composes them: Claude Code first; its deny stops Codex.
func (r *rig) promptSubmit(prompt string) []hooks.PromptDecision {
	r.t.Helper()
	var out []hooks.PromptDecision
	for _, b := range r.bridges {
		d, err := b.PromptSubmit(context.Background(), r.agent, prompt)
		if err != nil {
			r.t.Fatal(err)
		}
		out = append(out, d)
		if d.Reject {
			break
		}
	}
	return out
}

// echoStdin is a hook that blocks (exit 2) with its stdin as the reason.
const echoStdin = `cat >&2; exit 2`

// TestTurnPayloads: the stdin of UserPromptSubmit and Stop hooks, byte for
// byte, keys in upstream's order; Claude Code ends it with a newline.
func TestTurnPayloads(t *testing.T) {
	r := newRig(t, map[string]string{
		"hooks.json":       `{"hooks": {"UserPromptSubmit": [{"hooks": [` + cmd(echoStdin) + `]}], "Stop": [{"hooks": [` + cmd(echoStdin) + `]}]}}`,
		"codex-hooks.json": `{"hooks": {"UserPromptSubmit": [{"hooks": [` + cmd(echoStdin) + `]}], "Stop": [{"hooks": [` + cmd(echoStdin) + `]}]}}`,
	})
	for i, b := range r.bridges {
		if _, err := b.PromptSubmit(context.Background(), r.agent, "say \"hi\"\n"); err != nil {
			t.Fatal(err)
		}
		steer, err := b.Stop(context.Background(), r.agent)
		if err != nil || steer == nil {
			t.Fatalf("bridge %d: stop %v, %v", i, steer, err)
		}
	}
	base := `{"session_id":"sess-1","transcript_path":"` + r.log.Path() + `","cwd":"` + r.ws + `","hook_event_name":`
	want := []string{
		base + `"UserPromptSubmit","prompt":"say \"hi\"\n"}`,
		base + `"Stop","stop_hook_active":false}`,
		base + `"UserPromptSubmit","model":"","permission_mode":"default","turn_id":"1","prompt":"say \"hi\"\n"}`,
		base + `"Stop","model":"","permission_mode":"default","turn_id":"1","stop_hook_active":false,"last_assistant_message":null}`,
	}
	var got []string
	for _, e := range r.hookEvents() {
		if e["type"] == session.KindHookResult {
			got = append(got, e["stderrSummary"].(string))
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("payloads (-want +got):\n%s", diff)
	}
}

// TestPromptSubmitDecisions: a deny rejects the turn (and Codex never
// runs), an additionalContext becomes the bridge's message, Codex also
// takes plain stdout as context, Claude Code does not.
func TestPromptSubmitDecisions(t *testing.T) {
	ctxJSON := `echo '{"hookSpecificOutput":{"hookEventName":"UserPromptSubmit","additionalContext":"from json"}}'`
	tests := []struct {
		name      string
		cc, codex string
		want      []hooks.PromptDecision
	}{
		{"exit 2 rejects; Codex never runs", "echo no >&2; exit 2", "exit 2", []hooks.PromptDecision{{Reject: true}}},
		{"decision block rejects", `echo '{"decision":"block","reason":"r"}'`, "", []hooks.PromptDecision{{Reject: true}}},
		{"exit 1 decides nothing", "exit 1", "exit 1", []hooks.PromptDecision{{}, {}}},
		{"JSON context", ctxJSON, ctxJSON, []hooks.PromptDecision{
			{Context: &pipeline.ContextMessage{Plugin: "hooks-claude-code", Texts: []string{"from json"}}},
			{Context: &pipeline.ContextMessage{Plugin: "hooks-codex", Texts: []string{"from json"}}}}},
		{"plain stdout: context for Codex only", "echo '  plain words  '", "echo '  plain words  '", []hooks.PromptDecision{
			{}, {Context: &pipeline.ContextMessage{Plugin: "hooks-codex", Texts: []string{"plain words"}}}}},
		{"plain stdout with a non-zero exit is no context", "", "echo words; exit 1", []hooks.PromptDecision{{}, {}}},
		{"context of another event is dropped", `echo '{"hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"x"}}'`, "", []hooks.PromptDecision{{}, {}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			files := map[string]string{}
			if tc.cc != "" {
				files["hooks.json"] = config("UserPromptSubmit", "-", cmd(tc.cc))
			}
			if tc.codex != "" {
				files["codex-hooks.json"] = config("UserPromptSubmit", "-", cmd(tc.codex))
			}
			r := newRig(t, files)
			if diff := cmp.Diff(tc.want, r.promptSubmit("hello")); diff != "" {
				t.Errorf("decisions (-want +got):\n%s", diff)
			}
		})
	}
}

// TestStopSteers: a Stop block returns the steering message (the stderr,
// else the fallback); a pass returns none.
func TestStopSteers(t *testing.T) {
	for _, tc := range []struct{ command, want string }{
		{"echo 'Also say SECOND.' >&2; exit 2", "Also say SECOND."},
		{"exit 2", hooks.FallbackStopReason},
		{`echo '{"decision":"block","reason":"keep going"}'`, "keep going"},
		{"exit 0", ""},
		{"exit 1", ""},
	} {
		r := newRig(t, map[string]string{"codex-hooks.json": config("Stop", `"ignored"`, cmd(tc.command))})
		steer, err := r.bridges[1].Stop(context.Background(), r.agent)
		if err != nil {
			t.Fatal(err)
		}
		got := ""
		if steer != nil {
			if steer.Plugin != "hooks-codex" || len(steer.Texts) != 1 {
				t.Fatalf("steer %+v", steer)
			}
			got = steer.Texts[0]
		}
		if got != tc.want {
			t.Errorf("%s: steer %q, want %q", tc.command, got, tc.want)
		}
	}
}

// TestTurnPointsShareTheHandlerCounter: handler ids count every matched run
// of a bridge at any point, logged without a matcher at the turn points.
func TestTurnPointsShareTheHandlerCounter(t *testing.T) {
	r := newRig(t, map[string]string{"hooks.json": `{"hooks": {"UserPromptSubmit": [{"matcher": "[", "hooks": [` + cmd("exit 0") + `]}], ` +
		`"PreToolUse": [{"matcher": "bash", "hooks": [` + cmd("exit 0") + `]}], "Stop": [{"hooks": [` + cmd("exit 0") + `]}]}}`})
	r.promptSubmit("p")
	r.run(echoArgs)
	if _, err := r.bridges[0].Stop(context.Background(), r.agent); err != nil {
		t.Fatal(err)
	}
	wantEvents(t, r,
		invoked("UserPromptSubmit", "claude-code", "claude-code:UserPromptSubmit:1", nil),
		result("UserPromptSubmit", "claude-code:UserPromptSubmit:1", "pass", n(0), ""),
		invoked("PreToolUse", "claude-code", "claude-code:PreToolUse:2", s("bash")),
		result("PreToolUse", "claude-code:PreToolUse:2", "pass", n(0), ""),
		invoked("Stop", "claude-code", "claude-code:Stop:3", nil),
		result("Stop", "claude-code:Stop:3", "pass", n(0), ""),
	)
}

// TestStrictTurnPoints: under the strict switch a UserPromptSubmit hook
// that cannot run rejects the turn; a Stop hook that cannot run lets the
// turn end (a block would force steps forever).
func TestStrictTurnPoints(t *testing.T) {
	missing := "no-such-turn-hook"
	r := newRig(t, map[string]string{"hooks.json": `{"hooks": {"UserPromptSubmit": [{"hooks": [` + cmd(missing) + `]}], "Stop": [{"hooks": [` + cmd(missing) + `]}]}}`}, strict)
	if d := r.promptSubmit("p"); len(d) != 1 || !d[0].Reject {
		t.Errorf("strict prompt submit %+v, want a rejection", d)
	}
	steer, err := r.bridges[0].Stop(context.Background(), r.agent)
	if err != nil || steer != nil {
		t.Errorf("strict stop %+v, %v: want no steering", steer, err)
	}
	lax := newRig(t, map[string]string{"hooks.json": `{"hooks": {"UserPromptSubmit": [{"hooks": [` + cmd(missing) + `]}]}}`})
	if d := lax.promptSubmit("p"); d[0].Reject {
		t.Error("without strict a missing command must not reject (upstream fails open)")
	}
}

func TestPromptText(t *testing.T) {
	got := hooks.PromptText([][]pipeline.Block{{pipeline.TextBlock("a"), {Type: "image"}, pipeline.TextBlock("b")}, {pipeline.TextBlock("c")}})
	if got != "abc" {
		t.Errorf("prompt %q", got)
	}
	if got := hooks.PromptText(nil); got != "" {
		t.Errorf("no messages: prompt %q", got)
	}
}
