package replay_test

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dshsim/dshsim/harness/replay"
	"github.com/dshsim/dshsim/harness/replay/isolate"
)

// TestPlanSwitchNotice: plan mode's user-switch notice in our log of a web
// session. A /plan after a model request (the constructed plan-later-turn:
// upstream's plan-review with a first turn before its /plan) queues the
// notice, which the turn the /plan's message opens enters first: a
// plugin message of plan-mode, form notice, its summary its text, with
// surfaceOp append, right before the user's message. The given
// plan-review (/plan before any request, then an approved plan's exit)
// enters none. The web comparison leaves user messages out, so this
// reads our log.
func TestPlanSwitchNotice(t *testing.T) {
	isolate.Require(t)
	const on = "The user switched this session to plan mode."
	task := "Plan a small change: add a --greeting flag to a CLI."
	for _, tc := range []struct {
		dir  string
		want []string // each user/message: turn, source, text's start
	}{
		{"testdata/replay/planmode/apps/web/tests/snapshots/plan-later-turn", []string{
			"1 user: Reply with the single word READY",
			"1 plugin @deepseek-ai/dsh-system-prompt: Current runtime context.",
			"2 plugin plan-mode notice " + on + " append: " + on,
			"2 user append: " + task,
		}},
		{"transcripts/frontends/apps/web/tests/snapshots/plan-review", []string{
			"1 user: " + task,
			"1 plugin @deepseek-ai/dsh-system-prompt: Current runtime context.",
		}},
	} {
		t.Run(filepath.Base(tc.dir), func(t *testing.T) {
			logs := t.TempDir()
			r := replay.Replay(context.Background(), filepath.Join(root, tc.dir), replay.Options{LogDir: logs})
			if r.Verdict != replay.Match {
				t.Fatalf("%s\n%s", r.Summary(), r.Detail())
			}
			got := userMessages(t, logs)
			if len(got) != len(tc.want) {
				t.Fatalf("user messages %q, want %d like %q", got, len(tc.want), tc.want)
			}
			for i, w := range tc.want {
				turn, rest, _ := strings.Cut(w, " ")
				head, text, _ := strings.Cut(rest, ": ")
				if !strings.HasPrefix(got[i], turn+" "+head) || !strings.Contains(got[i], ": "+text) {
					t.Errorf("user message %d %q, want %q", i, got[i], w)
				}
			}
		})
	}
}

// userMessages are the user/messages of the one log in dir, each as
// "turn kind [plugin form summary] [surfaceOp]: text".
func userMessages(t *testing.T, dir string) []string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "*.session.jsonl"))
	if len(files) != 1 {
		t.Fatalf("logs %q, want one", files)
	}
	f, err := os.Open(files[0])
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	turn := 0
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var e struct {
			Type string
			Data struct {
				Turn    int
				Content []struct{ Text string }
				Source  struct{ Kind, Plugin, Form, Summary string }
			}
			SurfaceOp string
		}
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatal(err)
		}
		switch e.Type {
		case "turn/start":
			turn = e.Data.Turn
		case "user/message":
			s := e.Data.Source
			head := slices.DeleteFunc([]string{itoa(turn), s.Kind, s.Plugin, s.Form, s.Summary, e.SurfaceOp}, func(p string) bool { return p == "" })
			var text []string
			for _, c := range e.Data.Content {
				text = append(text, c.Text)
			}
			out = append(out, strings.Join(head, " ")+": "+strings.Join(text, ""))
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}
