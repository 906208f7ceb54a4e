package compaction

import (
	"strings"
	"testing"

	"github.com/dshsim/dshsim/internal/jsjson"
)

// TestEstimateMessage: the meter's prices of one message, each want what
// upstream's TokenMeter.estimateMessage returns for the same content
// (dsh-token-meter 0.1.0-rc.8, run under node): text in UTF-16 code units
// rounded up per 4, +4 a block, +4 the message; a tool call's name and
// arguments each rounded up; a tool result its content +4; any other
// block its JSON.
func TestEstimateMessage(t *testing.T) {
	for _, tc := range []struct {
		name, content string
		want          int
	}{
		{"empty", `[]`, 4},
		{"one unit", `[{"type":"text","text":"a"}]`, 9},
		{"four units: no round up", `[{"type":"text","text":"abcd"}]`, 9},
		{"five units: rounded up", `[{"type":"text","text":"abcde"}]`, 10},
		{"astral characters count two units", `[{"type":"text","text":"😀😀x"}]`, 10},
		{"reasoning", `[{"type":"reasoning","text":"thinking hard"}]`, 12},
		{"tool call", `[{"type":"tool-call","id":"c1","name":"bash","arguments":"{\"command\":\"ls\"}"}]`, 13},
		{"tool result", `[{"type":"tool-result","toolCallId":"c1","content":[{"type":"text","text":"alpha\n"}],"isError":false}]`, 14},
		{"image: its JSON", `[{"type":"image","attachment":{"id":"a","mime":"image/png"}}]`, 23},
		{"other block: JSON length in UTF-16 units", `[{"type":"image","note":"é😀"}]`, 16},
		{"other block: UTF-16 units, not bytes", `[{"type":"image","note":"ééééé"}]`, 16},
		{"U+FFFF is one unit", `[{"type":"image","note":"\uffff\uffff"}]`, 15},
		{"other block: a lone surrogate is escaped in its JSON", `[{"type":"image","note":"\ud800"}]`, 16},
		{"a lone surrogate in text is one unit", `[{"type":"text","text":"\ud800\ud800\ud800\ud800\ud800"}]`, 10},
		{"a tool call's name and arguments are rounded up apart", `[{"type":"tool-call","id":"c","name":"b","arguments":"x"}]`, 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, err := jsjson.Parse([]byte(tc.content))
			if err != nil {
				t.Fatal(err)
			}
			got, err := EstimateMessage(v)
			if err != nil || got != tc.want {
				t.Errorf("EstimateMessage(%s) = %d, %v; want %d", tc.content, got, err, tc.want)
			}
		})
	}
}

// TestEstimateRefusesUnpricedBlocks: a block without the field its type
// prices is an error naming the block and field, never a guess.
func TestEstimateRefusesUnpricedBlocks(t *testing.T) {
	for _, tc := range []struct{ content, want string }{
		{`{}`, "content: want an array"},
		{`[{"type":"text"}]`, "content[0]: text: want a string"},
		{`[{"type":"text","text":5}]`, "content[0]: text: want a string"},
		{`[{"type":"tool-call","name":7,"arguments":"{}"}]`, "content[0]: name: want a string"},
		{`[{"type":"text","text":"x"},{"type":"tool-call","name":"bash"}]`, "content[1]: arguments: want a string"},
		{`[{"type":"tool-result","content":"x"}]`, "content[0]: content: want an array"},
		{`[3]`, "content[0]: want an object"},
	} {
		v, err := jsjson.Parse([]byte(tc.content))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := EstimateMessage(v); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("EstimateMessage(%s) = %v, want %q", tc.content, err, tc.want)
		}
	}
}
