package recording

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

// TestDeriveSummaryCall: a compaction/summary marked llmStreamCall is the
// summary model call it records, in the script at its place in the log
// (upstream's llm-replay reads it under the event's earlier name
// compact/summary): a block-start and block-end per rawOutput block, its
// usage, a stop finish. The given recording's four calls are the bash
// call, the overflowed call, the summary and the retried call.
func TestDeriveSummaryCall(t *testing.T) {
	r, err := Load(filepath.Join(transcripts, "frontends/examples/headless-agent/tests/snapshots/compaction-recovery"))
	if err != nil {
		t.Fatal(err)
	}
	s, err := Derive(r)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, rep := range s.Replies {
		text := ""
		for _, b := range rep.Blocks {
			text += b.Text
		}
		got = append(got, rep.Finish+":"+text+":"+string(rep.Usage))
	}
	want := []string{"tool-calls::{\"inputTokens\":24,\"outputTokens\":6}", "error::",
		"stop:The request established a durable compaction premise.:{\"inputTokens\":20,\"outputTokens\":4}",
		"stop:COMPACTION RECOVERED:{\"inputTokens\":20,\"outputTokens\":4}"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("replies\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestDeriveRejectsBadSummaryCalls: a summary marked as a model call that
// does not record one names the line and field; a summary made without a
// model call is no call of the script.
func TestDeriveRejectsBadSummaryCalls(t *testing.T) {
	const head = `{"type":"session","version":0,"id":"x","createdAt":1,"cwd":"/w","delegationDepth":0}` + "\n"
	summary := func(extra string) string {
		return `{"type":"compaction/summary","seq":0,"time":1,"data":{"compactionId":"k","summary":[],"shadowedRange":{"start":1,"end":1},"shadowedSeqs":[1],"shadowedTokenCount":9` + extra + "}}\n"
	}
	chunk := `{"type":"assistant/chunk","seq":0,"time":1,"data":{"turn":1,"step":1,"chunk":{"type":"block-start","index":0,"blockType":"text"}}}` + "\n"
	for _, tc := range []struct {
		name, log, field, problem string
		line, replies             int
	}{
		{"no model call", summary(`,"llmStreamCall":false`), "", "", 0, 0},
		{"unmarked", summary(``), "", "", 0, 0},
		{"no rawOutput", summary(`,"llmStreamCall":true`), "data.rawOutput", "missing (required when data.llmStreamCall is true", 2, 0},
		{"llmStreamCall of a wrong type", summary(`,"llmStreamCall":"yes"`), "data.llmStreamCall", "want bool", 2, 0},
		{"a block that is not an object", summary(`,"llmStreamCall":true,"rawOutput":[3]`), "data.rawOutput[0]", "want a content block", 2, 0},
		{"a text block without its text", summary(`,"llmStreamCall":true,"rawOutput":[{"type":"text","text":"a"},{"type":"text"}]`), "data.rawOutput[1].text", "want string", 2, 0},
		{"an unknown block", summary(`,"llmStreamCall":true,"rawOutput":[{"type":"video"}]`), "data.rawOutput[0].type", `unknown block type "video"`, 2, 0},
		{"a usage that is not one", summary(`,"llmStreamCall":true,"rawOutput":[],"usage":3`), "data.usage", "want an object", 2, 0},
		{"a usage", summary(`,"llmStreamCall":true,"rawOutput":[],"usage":{"inputTokens":1}`), "", "", 0, 1},
		{"inside a model stream", chunk + strings.Replace(summary(`,"llmStreamCall":true,"rawOutput":[]`), `"seq":0`, `"seq":1`, 1), "type", "a compaction's summary inside the model stream of turn 1 step 1", 3, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, evs, err := ParseSession("r", SessionFile, []byte(head+tc.log))
			if err != nil {
				t.Fatal(err)
			}
			s, err := deriveEvents("r", evs)
			if tc.field == "" && tc.problem == "" {
				if err != nil || len(s.Replies) != tc.replies {
					t.Fatalf("deriveEvents = %v, %v; want %d replies", s, err, tc.replies)
				}
				return
			}
			var e *Error
			if !errors.As(err, &e) || e.Line != tc.line || e.Field != tc.field || !strings.HasPrefix(e.Problem, tc.problem) {
				t.Fatalf("deriveEvents = %v (%#v); want line %d field %s problem %q", err, e, tc.line, tc.field, tc.problem)
			}
		})
	}
}
