package replay

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/dshsim/dshsim/compaction"
	"github.com/dshsim/dshsim/harness/replay/recording"
	"github.com/dshsim/dshsim/llm"
	"github.com/dshsim/dshsim/pipeline/session"
)

// TestLiveConversationAfterCompaction: a live model is sent the surface
// of the log (the compaction's checkpoint in place of the range it
// replaced, nothing of compaction/*), and a summary call the range's
// messages then the instruction.
func TestLiveConversationAfterCompaction(t *testing.T) {
	rec, err := recording.Load(filepath.Join("..", "..", "transcripts", "frontends/examples/headless-agent/tests/snapshots/compaction-recovery"))
	if err != nil {
		t.Fatal(err)
	}
	events := make([]session.Event, len(rec.Events))
	for i, e := range rec.Events {
		events[i] = session.Event{Type: e.Type, Seq: e.Seq, Data: e.Data, SurfaceOp: e.SurfaceOp}
	}
	texts := func(msgs []llm.Message) []string {
		var out []string
		for _, m := range msgs {
			for _, b := range m.Content {
				out = append(out, string(m.Role)+" "+b.Type+" "+b.Text+b.Name+b.ToolCallID)
			}
		}
		return out
	}
	upTo := slices.IndexFunc(events, func(e session.Event) bool { return e.Type == session.KindCompactionEnd })
	msgs, err := conversation(events[:upTo+1])
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"user text " + compaction.CheckpointPreamble + "\n\n" + compaction.SummaryOpenTag,
		"user text The request established a durable compaction premise.",
		"user text " + compaction.SummaryCloseTag,
		"assistant tool-call bash",
		"user tool-result call_compaction_marker",
	}
	if got := texts(msgs); !slices.Equal(got, want) {
		t.Errorf("conversation after the compaction\n%q\nwant\n%q", got, want)
	}
	msgs, err = summaryConversation(&SummaryRequest{Events: events[4:5], MaxTokens: 32})
	if err != nil {
		t.Fatal(err)
	}
	if got := texts(msgs); len(got) != 2 || got[1] != "user text "+compaction.Instruction || got[0][:25] != "user text Establish a dur" {
		t.Errorf("summary call %q", got)
	}
}
