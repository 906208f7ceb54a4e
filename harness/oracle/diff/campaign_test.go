package diff

import (
	"errors"
	"reflect"
	"testing"
)

// TestTallyNamesUnstableCases: a campaign counts each outcome and names
// the cases upstream did not reproduce, in case order, apart from the
// mismatches (an unstable case is never a finding); a departure is a
// finding only when departures are asked for; an upstream error is listed.
// Planted bugs caught: an unstable case counted as a finding or left
// unnamed, a departure counted twice.
func TestTallyNamesUnstableCases(t *testing.T) {
	cases := []*Case{{Name: "gen-35-1"}, {Name: "gen-35-2"}, {Name: "gen-35-3"}, {Name: "gen-35-4"}, {Name: "gen-35-5"}, {Name: "gen-35-6"}}
	results := []*Checked{{Outcome: Unstable}, {Outcome: Match}, {Outcome: Mismatch, Signature: "s"}, {Outcome: Unstable}, {Outcome: Departure}, nil}
	errs := []error{nil, nil, nil, nil, nil, errors.New("no verdict")}
	for _, departures := range []bool{false, true} {
		rep := (&Campaign{Departures: departures}).tally(cases, results, errs)
		var found []string
		for _, f := range rep.Findings {
			found = append(found, f.Case.Name)
		}
		wantFound, wantDepartures := []string{"gen-35-3"}, 1
		if departures {
			wantFound, wantDepartures = []string{"gen-35-3", "gen-35-5"}, 0
		}
		if rep.Run != 6 || rep.Matched != 1 || rep.Unstable != 2 || rep.Departures != wantDepartures || len(rep.Errors) != 1 ||
			!reflect.DeepEqual(rep.UnstableCases, []string{"gen-35-1", "gen-35-4"}) || !reflect.DeepEqual(found, wantFound) {
			t.Errorf("departures %v: %+v, findings %v", departures, rep, found)
		}
	}
}
