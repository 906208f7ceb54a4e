package projection

import (
	"slices"

	"github.com/dshsim/dshsim/harness/replay/recording"
)

// BoundaryKinds are the projected kinds at the tool boundary: the calls and
// their results (run_code's nested ones too), the approvals, the policy
// events that confine the next call, and the plan mode switches (whether
// exit_plan_mode may run).
var BoundaryKinds = []string{KindCall, KindResult, KindAsked, KindDecided, KindDispatchStart, KindDispatch, KindSandboxMode, KindApprovalPolicy, KindPlan}

// whyBoundary is why an event outside the tool boundary is not compared.
const whyBoundary = "outside the tool boundary, where a web recording is compared: the prompts, titles, context messages and turn ends are the web app's composition around the session, shown by its UI renders"

// ProjectBoundary is [ProjectCovered] kept to the tool boundary
// ([BoundaryKinds]): every other projected event is left out, counted
// in the coverage with its reason.
func ProjectBoundary(events []recording.Event, n Normalizer) ([]Item, Coverage, error) {
	items, cov, err := ProjectCovered(events, n)
	if err != nil {
		return nil, cov, err
	}
	types := make(map[int64]string, len(events))
	for _, e := range events {
		types[e.Seq] = e.Type
	}
	var kept []Item
	for _, it := range items {
		if slices.Contains(BoundaryKinds, it.Kind) {
			kept = append(kept, it)
			continue
		}
		typ := types[it.Seq]
		if cov.Compared[typ]--; cov.Compared[typ] == 0 {
			delete(cov.Compared, typ)
		}
		cov.left(typ, whyBoundary)
	}
	return kept, cov, nil
}
