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

// TestBind: the constructor runs New with the bound configuration, each
// time it is called.
func TestBind(t *testing.T) {
	calls := 0
	newTools := func(name string) ([]toolreg.Tool, error) {
		calls++
		return []toolreg.Tool{{Def: pipeline.Tool{Name: name}}}, nil
	}
	c := toolreg.Bind(newTools, "echo")
	if calls != 0 {
		t.Fatal("Bind ran New")
	}
	for i := 1; i <= 2; i++ {
		regs, err := c()
		if err != nil || len(regs) != 1 || regs[0].Name() != "echo" || calls != i {
			t.Fatalf("call %d: %+v %v (New ran %d times)", i, regs, err, calls)
		}
	}
}
