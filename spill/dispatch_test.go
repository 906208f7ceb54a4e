package spill

import (
	"os"
	"strings"
	"testing"

	"github.com/dshsim/dshsim/pipeline"
)

// TestDispatchLog: the durable-log arm bounds a nested call's logged copy,
// read included; content within the cap and non-text content stay.
func TestDispatchLog(t *testing.T) {
	big := strings.Repeat("0123456789abcdef\n", 100) // 1700 bytes
	for _, c := range []struct {
		name    string
		tool    string
		content []pipeline.Block
		spilled bool
	}{
		{"a nested bash result over the cap", "bash", []pipeline.Block{pipeline.TextBlock(big)}, true},
		{"read is not exempt here", "read", []pipeline.Block{pipeline.TextBlock(big)}, true},
		{"within the cap", "bash", []pipeline.Block{pipeline.TextBlock("short")}, false},
		{"a non-text block", "bash", []pipeline.Block{{Type: "image"}, pipeline.TextBlock(big)}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, w := newPolicy(t, ByteConfig(400), "")
			call := pipeline.NewSubCall(newCall(t, "run_code", "s"), "call-1:code:1", c.tool, []byte(`{}`), nil)
			got := p.DispatchLog(call, c.content)
			if (got != nil) != c.spilled {
				t.Fatalf("replaced: %v, want %v (warnings %q)", got != nil, c.spilled, *w)
			}
			if !c.spilled {
				return
			}
			text := got[0].Text
			i := strings.Index(text, "stored at: ")
			if len(got) != 1 || len(text) > 400 || i < 0 {
				t.Fatalf("logged copy %q", text)
			}
			loc := strings.TrimSuffix(strings.Fields(text[i+len("stored at: "):])[0], ".")
			if b, err := os.ReadFile(loc); err != nil || string(b) != big {
				t.Errorf("the spill file %s does not hold the full text: %v", loc, err)
			}
		})
	}
}
