package diff

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"testing"

	"github.com/dshsim/dshsim/harness/oracle"
)

// TestSubagentsWaitForTheirChildren: no generated subagent call starts a
// background child (one that ends while the model works), in the session
// or in a child; subagent_fork's background is generated only as the
// refusal it is.
func TestSubagentsWaitForTheirChildren(t *testing.T) {
	n := 0
	for _, c := range cases(150) {
		if c.Profile != "subagents" {
			continue
		}
		n++
		turns := c.Script.Turns
		for _, ch := range c.Script.Children {
			turns = append(turns, ch.Turns...)
		}
		for _, turn := range turns {
			for _, st := range turn {
				for _, call := range st.Calls {
					args := argsOf(t, call)
					bg, set := args["run_in_background"]
					_, prompt := args["prompt"].(string)
					_, desc := args["description"].(string)
					if call.Name == "subagent" && (!set || bg == true) && prompt && desc {
						t.Errorf("%s: a subagent call that may start a background child: %s", c.Name, call.Args)
					}
				}
			}
		}
	}
	if n == 0 {
		t.Fatal("no subagents case among the cases")
	}
}

// TestConcurrentChildrenShareAScript: when a step starts two children at
// once, either may call the model first, so both get the same script;
// when one of the two is refused, one child script is reserved.
func TestConcurrentChildrenShareAScript(t *testing.T) {
	pairs, single := 0, 0
	for i := range 300 {
		g := &gen{r: rand.New(rand.NewPCG(5, uint64(i))), areas: map[string]bool{}, ws: map[string]string{}}
		setupSubagents(g)
		moveDelegatePair(g)
		step := g.steps[len(g.steps)-1]
		if len(step.Calls) != 2 {
			t.Fatalf("case %d: a pair step has %d calls", i, len(step.Calls))
		}
		starts := 0
		for _, call := range step.Calls {
			a := argsOf(t, call)
			_, prompt := a["prompt"].(string)
			if _, desc := a["description"].(string); prompt && desc {
				starts++
			}
		}
		if len(g.children) != starts {
			t.Fatalf("case %d: %d children start, %d scripts reserved: %s %s", i, starts, len(g.children), step.Calls[0].Args, step.Calls[1].Args)
		}
		if starts == 2 {
			pairs++
			a, b := scriptJSON(t, g.children[0]), scriptJSON(t, g.children[1])
			if !bytes.Equal(a, b) || len(g.children[0].Turns[0]) != 1 || len(g.children[0].Turns[0][0].Calls) != 0 {
				t.Errorf("case %d: concurrent children get different scripts or call tools:\n%s\n%s", i, a, b)
			}
		} else {
			single++
		}
	}
	if pairs == 0 || single == 0 {
		t.Errorf("pairs %d, one refused %d: both kinds must be generated", pairs, single)
	}
}

func scriptJSON(t *testing.T, c oracle.Child) []byte {
	t.Helper()
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestChildScriptsFollowFirstModelCalls: a child that delegates has a
// smaller number than its children (upstream binds the n-th script to the
// child that calls the model n-th), and no child is deeper than the cap.
func TestChildScriptsFollowFirstModelCalls(t *testing.T) {
	deep := 0
	for _, c := range cases(150) {
		g := &gen{set: c.Settings, children: c.Script.Children}
		for n, ch := range c.Script.Children {
			if ch.Parent > n {
				t.Errorf("%s: child %d's parent %d comes after it", c.Name, n+1, ch.Parent)
			}
			if d := g.depthOf(n + 1); d > g.maxDepth() {
				t.Errorf("%s: child %d at depth %d over the cap %d", c.Name, n+1, d, g.maxDepth())
			} else if d > 1 {
				deep++
			}
		}
	}
	if deep == 0 {
		t.Error("no grandchild generated")
	}
}
