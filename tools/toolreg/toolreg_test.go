package toolreg_test

import (
	"encoding/json"
	"testing"

	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/tools/toolreg"
)

// TestYield: no rule yields on every call, NoYield on none, a rule of its
// own decides by the arguments.
func TestYield(t *testing.T) {
	background := func(args json.RawMessage) bool { return string(args) != `{"bg":true}` }
	for _, tc := range []struct {
		name string
		tool toolreg.Tool
		args string
		want bool
	}{
		{"no rule", toolreg.Tool{}, `{}`, true},
		{"no yield", toolreg.Tool{Yields: toolreg.NoYield}, `{}`, false},
		{"foreground", toolreg.Tool{Yields: background}, `{}`, true},
		{"background", toolreg.Tool{Yields: background}, `{"bg":true}`, false},
	} {
		if got := tc.tool.Yield(json.RawMessage(tc.args)); got != tc.want {
			t.Errorf("%s: Yield(%s) = %v, want %v", tc.name, tc.args, got, tc.want)
		}
	}
	if n := (toolreg.Tool{Def: pipeline.Tool{Name: "echo"}}).Name(); n != "echo" {
		t.Errorf("Name() = %q", n)
	}
}
