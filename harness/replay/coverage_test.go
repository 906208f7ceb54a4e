package replay_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshsim/dshsim/harness/replay"
	"github.com/dshsim/dshsim/harness/replay/isolate"
	"github.com/dshsim/dshsim/harness/replay/recording"
)

// editLine rewrites, in dir's session.jsonl, the first line holding all of
// marks, replacing old by new in it alone.
func editLine(t *testing.T, dir, old, new string, marks ...string) {
	t.Helper()
	path := filepath.Join(dir, recording.SessionFile)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(data), "\n")
	for i, ln := range lines {
		hit := strings.Contains(ln, old)
		for _, m := range marks {
			hit = hit && strings.Contains(ln, m)
		}
		if hit {
			lines[i] = strings.Replace(ln, old, new, 1)
			if err := os.WriteFile(path, []byte(strings.Join(lines, "")), 0o644); err != nil {
				t.Fatal(err)
			}
			return
		}
	}
	t.Fatalf("no line of %s holds %q and %q", path, old, marks)
}

// TestEditedPromptDoesNotMatch: a prompt edited in session.jsonl, with
// input.json unchanged, is a mismatch naming the event, whether the edit is
// in the user/message the model got or in the splice that queued it.
func TestEditedPromptDoesNotMatch(t *testing.T) {
	isolate.Require(t)
	for _, tc := range []struct {
		name, mark, want string
	}{
		{"the prompt's message", `"type":"user/message"`, `turn 1, the user's prompt: texts[0]: expected "Read notes.txt`},
		{"the splice that queued it", `"type":"agent/inbox/spliced"`, `turn 0, inbox/spliced next-turn: inserted[0].texts[0]: expected "Read notes.txt`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := copyRecording(t, "fs-read")
			os.Remove(filepath.Join(dir, recording.ProjectionFile)) // its staleness is another check
			editLine(t, dir, "Use the read tool", "Read notes.txt with the read tool", tc.mark, `"kind":"user"`)
			r := replay.Replay(context.Background(), dir, replay.Options{})
			if r.Verdict != replay.Mismatch || !strings.Contains(r.FirstDifference(), tc.want) {
				t.Fatalf("edited prompt: %s, first difference %q, want %q", r.Verdict, r.FirstDifference(), tc.want)
			}
		})
	}
}

// TestNotesNameWhatIsNotCompared: a replay's notes list, for its log and
// each child's, the events compared per type and every one not compared,
// with the reason.
func TestNotesNameWhatIsNotCompared(t *testing.T) {
	isolate.Require(t)
	r := replay.Replay(context.Background(), filepath.Join(root, "transcripts", "subagent-report"), replay.Options{})
	if r.Verdict != replay.Match {
		t.Fatalf("%s\n%s", r.Summary(), r.Detail())
	}
	note := func(notes []string, prefix string) string {
		for _, n := range notes {
			if strings.HasPrefix(n, prefix) {
				return n
			}
		}
		t.Fatalf("no note starts %q in %q", prefix, notes)
		return ""
	}
	for _, n := range []string{note(r.Notes, "session.jsonl: events compared "), note(r.Children[0].Notes, "session.1.jsonl: events compared ")} {
		for _, want := range []string{"tool/call 1", "user/message ", "; not compared: ", "assistant/chunk ", "(the model's reply: the script the replay plays", "request/header 1", "step/start ", "turn/start "} {
			if !strings.Contains(n, want) {
				t.Errorf("note %q lacks %q", n, want)
			}
		}
	}
	if n := note(r.Notes, "session.jsonl: "); !strings.Contains(n, "agent/inbox/spliced next-step 2 (a message staged for the next step") {
		t.Errorf("the staged splices are not named: %q", n)
	}
	if n := note(r.Children[0].Notes, "session.1.jsonl: "); !strings.Contains(n, "session/end-seed 1 (the end of a child's seed") {
		t.Errorf("the child's seed end is not named: %q", n)
	}
}
