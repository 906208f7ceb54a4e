package replay_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshsim/dshsim/harness/replay"
	"github.com/dshsim/dshsim/harness/replay/isolate"
	"github.com/dshsim/dshsim/pipeline/session"
	"github.com/dshsim/dshsim/sandbox/sandboxtest"
)

// TestSteerEntersTheNextStep: the web recording steering matches, its
// steered message delivered where upstream's web app delivers it: queued
// as a row while turn 1 runs, the row steered into the running turn
// (removed from next-turn, canceled, and steered into next-step) once
// step 1 (the question's) ended, and entered by step 2's claim, the one
// model reply that sees it; the turn does not end before it, and no other
// turn opens for it.
func TestSteerEntersTheNextStep(t *testing.T) {
	isolate.Require(t)
	logs := t.TempDir()
	r := replay.Replay(context.Background(), filepath.Join(root, "transcripts/frontends/apps/web/tests/snapshots/steering"), replay.Options{LauncherPath: sandboxtest.Runner(t), LogDir: logs})
	if r.Verdict != replay.Match {
		t.Fatalf("%s\n%s", r.Summary(), r.Detail())
	}
	c, err := session.Read(r.LogPath)
	if err != nil {
		t.Fatal(err)
	}
	const steer = "Interjection: include the word BANANA in your final reply."
	var got []string
	for _, e := range c.Events {
		var d struct {
			Turn, Step int
			Target     string
			Outcome    string
			Inserted   []json.RawMessage
			Content    []struct{ Text string }
		}
		json.Unmarshal(e.Data, &d)
		switch e.Type {
		case session.KindTurnStart, session.KindTurnEnd:
			got = append(got, fmt.Sprintf("%s %d", e.Type, d.Turn))
		case session.KindStepStart, session.KindStepEnd, session.KindToolResult:
			got = append(got, fmt.Sprintf("%s %d.%d", e.Type, d.Turn, d.Step))
		case session.KindInboxSpliced:
			if len(d.Inserted) > 0 && strings.Contains(string(d.Inserted[0]), steer) {
				got = append(got, "queue "+d.Target)
			} else if d.Outcome != "" {
				got = append(got, "removed "+d.Target+" "+d.Outcome)
			}
		case session.KindUserMessage:
			if len(d.Content) > 0 && d.Content[0].Text == steer {
				got = append(got, "entered")
			}
		}
	}
	want := "turn/start 1, step/start 1.1, tool/result 1.1, step/end 1.1, queue next-turn, removed next-turn canceled, queue next-step, step/start 1.2, entered, step/end 1.2, turn/end 1"
	if g := strings.Join(got, ", "); g != want {
		t.Fatalf("our log:\n  %s\nwant\n  %s", g, want)
	}
}
