package diff

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/dshsim/dshsim/harness/oracle"
)

// TestGenerateJSONRPC: a JSON-RPC case is the same on every call, its own
// (not the ACP case of the same numbers), fits the SDK's path with no
// overlay switch, and across a few hundred cases runs in both compositions:
// the minimal one (its cases call the editor and delegate nothing; their
// calls are the persistent bash and the editor alone) and the default one
// (with delegation, and writes outside the workspace that nothing
// confines).
func TestGenerateJSONRPC(t *testing.T) {
	minimal, delegating := 0, 0
	areas := map[string]bool{}
	for i := range 300 {
		c := frontendCase(t, JSONRPCProfile, 7, i)
		if err := oracle.JSONRPCScriptError(c.Script, c.Settings); err != nil {
			t.Fatalf("case %d does not fit the SDK's path: %v", i, err)
		}
		if err := c.Script.Check(); err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		var names []string
		for _, st := range c.Script.Turns[0] {
			for _, call := range st.Calls {
				names = append(names, call.Name)
				if strings.Contains(string(call.Args), `"../`) {
					t.Errorf("case %d names a path beside the workspace, whose name is random upstream: %s", i, call.Args)
				}
			}
		}
		if slices.Contains(names, oracle.EditorTool) {
			minimal++
			for _, n := range names {
				if n != oracle.EditorTool && n != "bash" {
					t.Errorf("case %d: the minimal composition has no %s", i, n)
				}
			}
		} else if slices.Contains(c.Areas, AreaPersistentBash) {
			t.Errorf("case %d: persistent bash outside the minimal composition", i)
		}
		if len(c.Script.Children) > 0 {
			delegating++
		}
		for _, a := range c.Areas {
			areas[a] = true
		}
	}
	if minimal < 50 || minimal > 150 || delegating == 0 {
		t.Errorf("%d minimal cases of 300 (about one in three), %d delegating", minimal, delegating)
	}
	for _, a := range []string{AreaNoBoundary, AreaPersistentBash, AreaEditor, AreaDelegation, AreaChildTools, AreaDelegationArgs} {
		if !areas[a] {
			t.Errorf("no case explores %s", a)
		}
	}
	if a, b := GenerateJSONRPC(7, 3).Script, Generate(7, 3).Script; reflect.DeepEqual(a.Turns, b.Turns) {
		t.Error("the JSON-RPC case is the ACP case of the same numbers")
	}
	if slices.Contains(Profiles(), JSONRPCProfile) {
		t.Error("Profiles lists the JSON-RPC profile among the ACP ones (Generate would draw it)")
	}
}

// TestJSONRPCAvoidsWhatUpstreamDoesNotReproduce: no JSON-RPC case prints
// over the executor's cap (the default composition names a full-output
// file of a random path) or exits the persistent shell (the terminal's
// echo of "exit" races the shell's end).
func TestJSONRPCAvoidsWhatUpstreamDoesNotReproduce(t *testing.T) {
	for i := range 300 {
		for _, st := range GenerateJSONRPC(7, i).Script.Turns[0] {
			for _, call := range st.Calls {
				if args := string(call.Args); strings.Contains(args, "head -c 64") || strings.Contains(args, `"exit 9"`) {
					t.Errorf("case %d: %s", i, args)
				}
			}
		}
	}
}
