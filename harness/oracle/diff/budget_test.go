package diff

import (
	"context"
	"strings"
	"testing"

	"github.com/dshsim/dshsim/harness/oracle"
	"github.com/dshsim/dshsim/harness/replay/isolate"
)

// BudgetSeed is the seed of CI's budget: one case of each profile.
const BudgetSeed = 25

// TestOnePerProfile: the budget meets every profile once.
func TestOnePerProfile(t *testing.T) {
	idx := OnePerProfile(BudgetSeed)
	seen := map[string]bool{}
	for _, i := range idx {
		seen[Generate(BudgetSeed, i).Profile] = true
	}
	if len(idx) != len(profiles()) || len(seen) != len(idx) {
		t.Errorf("cases %v meet profiles %v", idx, seen)
	}
}

// TestDifferentialBudget runs CI's budget when DSHSIM_ORACLE names an
// oracle: one generated case of each profile through upstream and our
// stack. Every case upstream reproduces must match; a mismatch names the
// command that reproduces and shrinks it.
func TestDifferentialBudget(t *testing.T) {
	o, err := oracle.FromEnv()
	if err != nil {
		t.Skip(err)
	}
	isolate.Require(t)
	if err := o.SameAgent("../agent"); err != nil {
		t.Skip(err) // its verdicts would be another configuration's
	}
	if testing.Short() {
		t.Skip("-short: the budget runs upstream's suite twice per case (about a minute)")
	}
	c := &Campaign{Checker: &Checker{Oracle: o, Work: t.TempDir()}, Seed: BudgetSeed, Indices: OnePerProfile(BudgetSeed), Parallel: 2, Log: logWriter{t}}
	rep, err := c.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range rep.Findings {
		t.Errorf("%s (%s): %s\n%s\nreproduce and shrink: go run ./harness/oracle/cmd/dsh-oracle diff -seed %d -start %d -n 1 -o DIR", f.Case.Name, f.Case.Profile, f.Checked.Signature, f.Checked.Detail, f.Case.Seed, f.Case.Index)
	}
	for _, e := range rep.Errors {
		t.Errorf("upstream could not run a case: %s", e)
	}
	if rep.Matched+rep.Departures < rep.Run/2 {
		t.Errorf("only %d of %d cases were compared (%d unstable upstream)", rep.Matched+rep.Departures, rep.Run, rep.Unstable)
	}
}

// TestHeadlessBudget runs CI's budget of the headless profile when
// DSHSIM_ORACLE names an oracle: the first cases of BudgetSeed through
// upstream's headless front end and our stack, each one upstream
// reproduces matching.
func TestHeadlessBudget(t *testing.T) {
	frontendBudget(t, HeadlessProfile, "-short: the budget runs upstream's headless profile twice per case (about half a minute)")
}

// TestGoalBudget runs CI's budget of the goal profile when DSHSIM_ORACLE
// names an oracle: the first cases of BudgetSeed through upstream's goal
// suite (the goal domain, round driver and tools) and our stack, each one
// upstream reproduces matching.
func TestGoalBudget(t *testing.T) {
	frontendBudget(t, GoalProfile, "-short: the budget runs upstream's goal suite twice per case (about a minute)")
}

// TestJSONRPCBudget runs CI's budget of the JSON-RPC profile when
// DSHSIM_ORACLE names an oracle: the first cases of BudgetSeed through
// upstream's SDK client and server and our stack, each one upstream
// reproduces matching.
func TestJSONRPCBudget(t *testing.T) {
	frontendBudget(t, JSONRPCProfile, "-short: the budget runs upstream's SDK path twice per case (about half a minute)")
}

// frontendBudget runs the first two cases of BudgetSeed of a front end's
// profile; every case upstream reproduces must match, and one must be
// compared.
func frontendBudget(t *testing.T, profile, short string) {
	o, err := oracle.FromEnv()
	if err != nil {
		t.Skip(err)
	}
	isolate.Require(t)
	if err := o.SameAgent("../agent"); err != nil {
		t.Skip(err)
	}
	if testing.Short() {
		t.Skip(short)
	}
	p, ok := FrontendProfileOf(profile)
	if !ok {
		t.Fatalf("no front end's profile %s", profile)
	}
	c := &Campaign{Checker: &Checker{Oracle: o, Work: t.TempDir(), Frontend: p.Frontend}, Generate: p.Generate,
		Seed: BudgetSeed, N: 2, Parallel: 2, Log: logWriter{t}}
	rep, err := c.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range rep.Findings {
		t.Errorf("%s: %s\n%s\nreproduce: go run ./harness/oracle/cmd/dsh-oracle diff -profile %s -seed %d -start %d -n 1 -o DIR", f.Case.Name, f.Checked.Signature, f.Checked.Detail, profile, f.Case.Seed, f.Case.Index)
	}
	for _, e := range rep.Errors {
		t.Errorf("upstream could not run a case: %s", e)
	}
	if rep.Matched == 0 {
		t.Errorf("no case was compared (%d unstable upstream)", rep.Unstable)
	}
}

// logWriter sends a campaign's lines to the test log.
type logWriter struct{ t *testing.T }

func (w logWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSuffix(string(p), "\n"))
	return len(p), nil
}
