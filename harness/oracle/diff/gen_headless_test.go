package diff

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/dshsim/dshsim/harness/oracle"
)

// TestGenerateHeadless: a headless case is the same on every call, its own
// (not the ACP case of the same numbers), fits the unattended path (one
// task, no answers, no child scripts, no override), runs under each
// permission mode across a few hundred cases, and escalates only when
// confined (under danger-full-access nothing is wider).
func TestGenerateHeadless(t *testing.T) {
	modes := map[string]int{}
	escalated := false
	for i := range 300 {
		c := frontendCase(t, HeadlessProfile, 7, i)
		if err := oracle.HeadlessScriptError(c.Script); err != nil {
			t.Fatalf("case %d does not fit the headless path: %v", i, err)
		}
		modes[c.Settings.Mode]++
		for _, turn := range c.Script.Turns {
			for _, st := range turn {
				for _, call := range st.Calls {
					if strings.Contains(string(call.Args), `"../`) {
						t.Errorf("case %d names a path beside the workspace, whose name is random upstream: %s", i, call.Args)
					}
				}
			}
		}
		esc := slices.Contains(c.Areas, AreaEscalation)
		escalated = escalated || esc
		if esc && c.Settings.Mode == oracle.DangerFullAccess {
			t.Errorf("case %d escalates under danger-full-access", i)
		}
		if slices.Contains(c.Areas, AreaApproval) {
			t.Errorf("case %d claims approval answers", i)
		}
	}
	for _, m := range []string{oracle.WorkspaceWrite, oracle.ReadOnly, oracle.DangerFullAccess} {
		if modes[m] == 0 {
			t.Errorf("no case runs under %s: %v", m, modes)
		}
	}
	if !escalated {
		t.Error("no case escalates")
	}
	if a, b := GenerateHeadless(7, 3).Script, Generate(7, 3).Script; reflect.DeepEqual(a.Turns, b.Turns) {
		t.Error("the headless case is the ACP case of the same numbers")
	}
	if strings.Contains(strings.Join(Profiles(), ","), HeadlessProfile) {
		t.Error("Profiles lists the headless profile among the ACP ones (Generate would draw it)")
	}
}
