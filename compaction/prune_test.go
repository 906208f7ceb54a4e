package compaction

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/dshsim/dshsim/internal/jsjson"
	"github.com/dshsim/dshsim/pipeline/session"
)

// TestResolvePruner: upstream's load checks of the budgets, the emitted
// size at its boundary (the marker is 39 code points).
func TestResolvePruner(t *testing.T) {
	for _, tc := range []struct {
		name  string
		c     PruneConfig
		field string
	}{
		{"defaults", PruneConfig{}, ""},
		{"head, marker and tail at the threshold", PruneConfig{ThresholdChars: n(59), HeadChars: n(10), TailChars: n(10)}, ""},
		{"one over the threshold", PruneConfig{ThresholdChars: n(58), HeadChars: n(10), TailChars: n(10)}, "thresholdChars"},
		{"a threshold of 0", PruneConfig{ThresholdChars: n(0)}, "thresholdChars"},
		{"a negative head", PruneConfig{HeadChars: n(-1)}, "headChars"},
		{"a negative tail", PruneConfig{TailChars: n(-1)}, "tailChars"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ResolvePruner(tc.c)
			var ce *ConfigError
			if (tc.field == "") != (err == nil) || (err != nil && (!errors.As(err, &ce) || ce.Field != tc.field)) {
				t.Errorf("ResolvePruner = %v, want field %q", err, tc.field)
			}
		})
	}
}

// TestPruneContent: text beyond the threshold keeps its head and tail by
// code point with the marker once between, across blocks; other blocks
// stay; a result at the threshold is left alone.
func TestPruneContent(t *testing.T) {
	p, err := ResolvePruner(PruneConfig{ThresholdChars: n(60), HeadChars: n(10), TailChars: n(5)})
	if err != nil {
		t.Fatal(err)
	}
	m := PruneMarker
	for _, tc := range []struct {
		name    string
		content string
		want    string // "" : left alone
	}{
		{"at the threshold", `[{"type":"text","text":"` + strings.Repeat("a", 60) + `"}]`, ""},
		{"one over", `[{"type":"text","text":"` + strings.Repeat("a", 10) + strings.Repeat("b", 46) + "ccccc" + `"}]`,
			`[{"type":"text","text":` + q("aaaaaaaaaa"+m+"ccccc") + `}]`},
		{"pairs are one code point", `[{"type":"text","text":"` + strings.Repeat("😀", 10) + strings.Repeat("b", 46) + "😀😀😀😀😀" + `"}]`,
			`[{"type":"text","text":` + q(strings.Repeat("😀", 10)+m+"😀😀😀😀😀") + `}]`},
		{"across blocks, an image kept, an emptied block dropped", `[{"type":"text","text":"` + strings.Repeat("a", 12) + `"},{"type":"image","data":"x"},{"type":"text","text":"` + strings.Repeat("b", 40) + `"},{"type":"text","text":"` + strings.Repeat("c", 9) + `","extra":1}]`,
			`[{"type":"text","text":` + q("aaaaaaaaaa"+m) + `},{"type":"image","data":"x"},{"type":"text","text":"ccccc","extra":1}]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, err := jsjson.Parse([]byte(tc.content))
			if err != nil {
				t.Fatal(err)
			}
			got, err := p.Content(v.Elems)
			if err != nil {
				t.Fatal(err)
			}
			if tc.want == "" {
				if got != nil {
					t.Errorf("pruned %s", jsjson.Stringify(&jsjson.Value{Kind: jsjson.Array, Elems: got}))
				}
				return
			}
			if s := jsjson.Stringify(&jsjson.Value{Kind: jsjson.Array, Elems: got}); s != tc.want {
				t.Errorf("pruned\n%s\nwant\n%s", s, tc.want)
			}
		})
	}
}

func q(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// TestPruneSession: each over-budget tool result on the surface is
// preceded by compaction/prune (its range and price) and replaced by a
// copy whose first block's content is pruned; others are left alone.
func TestPruneSession(t *testing.T) {
	l := pressureLog(t)
	long := strings.Repeat("x", 200)
	l.AppendWith(session.KindToolResult, json.RawMessage(`{"turn":1,"step":1,"message":{"content":[{"type":"tool-result","toolCallId":"c0","content":[{"type":"text","text":"`+long+`"}],"isError":false}],"role":"user"}}`),
		session.AppendOptions{SurfaceOp: "append"})
	p, _ := ResolvePruner(PruneConfig{ThresholdChars: n(100), HeadChars: n(10), TailChars: n(10)})
	got, err := p.PruneSession(l)
	if err != nil || got != 1 {
		t.Fatalf("PruneSession = %d, %v", got, err)
	}
	events, _ := l.Events()
	prune, repl := events[len(events)-2], events[len(events)-1]
	var pd pruneData
	if err := json.Unmarshal(prune.Data, &pd); err != nil || prune.Type != KindPrune || pd.ShadowedSeqs[0] != prune.Seq-1 || pd.ShadowedTokenCount != 50+4+4+4 {
		t.Errorf("compaction/prune %s", prune.Data)
	}
	wantText := q(strings.Repeat("x", 10) + PruneMarker + strings.Repeat("x", 10))
	if repl.Type != session.KindToolResult || !strings.Contains(string(repl.Data), `"text":`+wantText) || !strings.Contains(string(repl.SurfaceOp), `"replace"`) {
		t.Errorf("replacement %s %s", repl.Data, repl.SurfaceOp)
	}
	s, err := Fold(events)
	if err != nil || s.Nodes[len(s.Nodes)-1].Seq != repl.Seq {
		t.Errorf("surface %+v, %v", s, err)
	}
}
