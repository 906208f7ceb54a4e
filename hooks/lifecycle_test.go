package hooks_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dshsim/dshsim/pipeline"
)

// injected collects the context messages the lifecycle points hand over.
type injected struct {
	mu   sync.Mutex
	msgs []pipeline.ContextMessage
}

func (in *injected) add(m pipeline.ContextMessage) {
	in.mu.Lock()
	in.msgs = append(in.msgs, m)
	in.mu.Unlock()
}

func (in *injected) all() []pipeline.ContextMessage {
	in.mu.Lock()
	defer in.mu.Unlock()
	return append([]pipeline.ContextMessage(nil), in.msgs...)
}

// SessionStart, SubagentStart and SubagentStop run detached: nothing is
// logged, each takes a handler id from the one counter of its bridge (so
// the tool point's id after them is shifted), their payloads are
// upstream's, their matcher subject is the source or "general-purpose", and
// their context is handed to the caller once they have run.
func TestLifecyclePointsRunDetached(t *testing.T) {
	cc := `{"hooks": {
		"SessionStart": [{"matcher": "startup", "hooks": [` + cmd(`cat > ss.json; echo '{"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":"SS_CTX"}}'`) + `]},
		                 {"matcher": "resume", "hooks": [` + cmd(`cat > /dev/null; touch resumed`) + `]}],
		"SubagentStart": [{"matcher": "general-purpose", "hooks": [` + cmd(`cat > sa.json; echo '{"hookSpecificOutput":{"hookEventName":"SubagentStart","additionalContext":"SA_CTX"}}'`) + `]}],
		"SubagentStop": [{"hooks": [` + cmd(`cat > so.tmp; mv so.tmp so.json`) + `]}],
		"PreToolUse": [{"matcher": "bash", "hooks": [` + cmd(`cat > /dev/null`) + `]}]}}`
	codex := `{"hooks": {"SessionStart": [{"hooks": [` + cmd(`cat > cx.json; echo CODEX_CTX`) + `]}]}}`
	r := newRig(t, map[string]string{"hooks.json": cc, "codex-hooks.json": codex})
	for _, b := range r.bridges {
		if st := b.Status(); st.Err != nil {
			t.Fatal(st.Err)
		}
	}
	var in injected
	for _, b := range r.bridges {
		b.SessionStart(r.agent, "startup", in.add)
	}
	child := &pipeline.Agent{ID: "child-1", Session: r.log}
	r.bridges[0].SubagentStart(child, "child-1", in.add)
	r.bridges[0].SubagentStop(child, "child-1")
	waitFor(t, func() bool {
		_, stopped := r.file("so.json")
		return len(in.all()) == 3 && stopped
	})
	for _, b := range r.bridges {
		b.Drain()
	}
	if _, resumed := r.file("resumed"); resumed {
		t.Error(`the "resume" group ran for a "startup" session`)
	}
	wantResult(t, r.run(echoArgs), "HELLO\n", false)
	// The tool point's hook is the fourth run of the Claude Code bridge.
	if evs := r.hookEvents(); len(evs) != 2 || evs[0]["handlerId"] != "claude-code:PreToolUse:4" {
		t.Errorf("hook events %v: want only the PreToolUse pair, under id 4", evs)
	}
	got := map[string]bool{}
	for _, m := range in.all() {
		got[m.Plugin+" "+strings.Join(m.Texts, "|")] = true
	}
	want := map[string]bool{"hooks-claude-code SS_CTX": true, "hooks-claude-code SA_CTX": true, "hooks-codex CODEX_CTX": true}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("contexts %v, want %v", got, want)
	}
	ws := r.ws
	for name, want := range map[string]string{
		"ss.json": `{"session_id":"sess-1","transcript_path":"<log>","cwd":"<ws>","hook_event_name":"SessionStart","source":"startup"}` + "\n",
		"cx.json": `{"session_id":"sess-1","transcript_path":"<log>","cwd":"<ws>","hook_event_name":"SessionStart","model":"","permission_mode":"default","source":"startup"}`,
		"sa.json": `{"session_id":"sess-1","transcript_path":"<log>","cwd":"<ws>","hook_event_name":"SubagentStart","agent_id":"child-1","agent_type":"general-purpose"}` + "\n",
		"so.json": `{"session_id":"sess-1","transcript_path":"<log>","cwd":"<ws>","hook_event_name":"SubagentStop","agent_id":"child-1","agent_type":"general-purpose","stop_hook_active":false}` + "\n",
	} {
		b, err := os.ReadFile(filepath.Join(ws, name))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		text := strings.ReplaceAll(strings.ReplaceAll(string(b), jsonString(r.log.Path()), `"<log>"`), jsonString(ws), `"<ws>"`)
		if text != want {
			t.Errorf("%s:\n got %s\nwant %s", name, text, want)
		}
	}
}

// waitFor polls cond until it holds, failing t after 30 s.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the detached hooks did not finish within 30 s")
		}
	}
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// Drain cancels a lifecycle hook still running and waits for it.
func TestDrainCancelsDetachedRuns(t *testing.T) {
	r := newRig(t, map[string]string{"hooks.json": config("SessionStart", "-", cmd(`cat > /dev/null; sleep 30; touch late`))})
	var in injected
	r.bridges[0].SessionStart(r.agent, "startup", in.add)
	start := time.Now()
	r.bridges[0].Drain()
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("Drain took %v: the hook was not cancelled", d)
	}
	if _, late := r.file("late"); late {
		t.Error("the cancelled hook ran to its end")
	}
	r.bridges[0].Drain() // again: nothing to do
}
