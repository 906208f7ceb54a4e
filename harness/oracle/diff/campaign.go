package diff

import (
	"context"
	"fmt"
	"io"
	"sync"

	"github.com/dshsim/dshsim/harness/oracle"
)

// Campaign runs generated cases Start .. Start+N-1 of Seed through upstream
// and ours.
type Campaign struct {
	Checker *Checker
	Seed    uint64
	Start   int
	N       int
	// Indices, when set, are the cases run instead of Start .. Start+N-1.
	Indices []int
	// Generate makes the cases (nil: [Generate]; the headless profile's
	// are [GenerateHeadless], run with a Checker whose Frontend is headless).
	Generate func(seed uint64, index int) *Case
	// Parallel cases at once (0: 1).
	Parallel int
	// Shrink shrinks the first case of each new signature (after checking
	// that its difference reproduces with a fresh recording).
	Shrink bool
	// Known signatures are not shrunk (their minimal case is kept already).
	Known map[string]bool
	// Departures treats the cases that show a named departure as findings
	// (shrunk and kept the same way): a departure's test is a kept recording
	// that must differ exactly there.
	Departures bool
	// Keep is called with each minimal case (may be nil).
	Keep func(f *Finding) error
	// Log receives one line per case and per shrink (may be nil).
	Log io.Writer
	// Dump, when set, is called with every case that does not match
	// (unstable ones included), to keep its files for a look.
	Dump func(k *Case, res *Checked) error
}

// Finding is a case that differs.
type Finding struct {
	Case    *Case
	Checked *Checked
	// Reproduced says a second recording of the case differed the same way.
	Reproduced bool
	// Minimal is the shrunk script and its check (nil when not shrunk);
	// Tests counts the candidates shrinking tried.
	Minimal        *oracle.Script
	MinimalChecked *Checked
	Tests          int
}

// Report sums a campaign up.
type Report struct {
	Run, Matched, Unstable, Departures int
	// UnstableCases names the cases upstream did not reproduce, in case
	// order (each dropped: it says nothing about our stack).
	UnstableCases []string
	// Findings are the cases that differ, in case order.
	Findings []*Finding
	// Errors are cases upstream could not run (its error).
	Errors []string
}

// Signatures groups the findings' case names by signature.
func (r *Report) Signatures() map[string][]string {
	m := map[string][]string{}
	for _, f := range r.Findings {
		m[f.Checked.Signature] = append(m[f.Checked.Signature], f.Case.Name)
	}
	return m
}

// Run runs the campaign.
func (c *Campaign) Run(ctx context.Context) (*Report, error) {
	par := max(c.Parallel, 1)
	indices := c.Indices
	if indices == nil {
		for i := range c.N {
			indices = append(indices, c.Start+i)
		}
	}
	n := len(indices)
	results := make([]*Checked, n)
	errs := make([]error, n)
	cases := make([]*Case, n)
	var wg sync.WaitGroup
	var mu sync.Mutex
	sem := make(chan struct{}, par)
	generate := c.Generate
	if generate == nil {
		generate = Generate
	}
	for i, index := range indices {
		cases[i] = generate(c.Seed, index)
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			k := cases[i]
			results[i], errs[i] = c.Checker.Check(ctx, k.Name, k.Script, k.Settings)
			if errs[i] == nil && results[i].Outcome != Match && c.Dump != nil {
				errs[i] = c.Dump(k, results[i])
			}
			mu.Lock()
			c.logCase(k, results[i], errs[i])
			mu.Unlock()
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	rep := c.tally(cases, results, errs)
	if c.Shrink {
		if err := c.shrinkAll(ctx, rep); err != nil {
			return rep, err
		}
	}
	return rep, nil
}

// tally sums the cases' checks up (errs[i] set: upstream could not run
// case i).
func (c *Campaign) tally(cases []*Case, results []*Checked, errs []error) *Report {
	rep := &Report{Run: len(cases)}
	for i, res := range results {
		switch {
		case errs[i] != nil:
			rep.Errors = append(rep.Errors, fmt.Sprintf("%s: %v", cases[i].Name, errs[i]))
		case res.Outcome == Match:
			rep.Matched++
		case res.Outcome == Unstable:
			rep.Unstable++
			rep.UnstableCases = append(rep.UnstableCases, cases[i].Name)
		case res.Outcome == Departure && !c.Departures:
			rep.Departures++
		default:
			rep.Findings = append(rep.Findings, &Finding{Case: cases[i], Checked: res})
		}
	}
	return rep
}

func (c *Campaign) logf(format string, args ...any) {
	if c.Log != nil {
		fmt.Fprintf(c.Log, format+"\n", args...)
	}
}

func (c *Campaign) logCase(k *Case, res *Checked, err error) {
	switch {
	case err != nil:
		c.logf("%s [%s] upstream error: %v", k.Name, k.Profile, err)
	case res.Outcome == Mismatch:
		c.logf("%s [%s] MISMATCH %s (%s)", k.Name, k.Profile, res.Signature, res.Times())
	default:
		c.logf("%s [%s] %s (%s)", k.Name, k.Profile, res.Outcome, res.Times())
	}
}

// shrinkAll shrinks the first finding of each signature not known yet.
func (c *Campaign) shrinkAll(ctx context.Context, rep *Report) error {
	seen := map[string]bool{}
	for _, f := range rep.Findings {
		sig := f.Checked.Signature
		if seen[sig] || c.Known[sig] {
			continue
		}
		again, err := c.Checker.Check(ctx, f.Case.Name, f.Case.Script, f.Case.Settings)
		if err != nil {
			return err
		}
		if again.Outcome != f.Checked.Outcome || again.Signature != sig {
			c.logf("%s: a second recording gives %s %s, not %s: not shrunk", f.Case.Name, again.Outcome, again.Signature, sig)
			continue
		}
		seen[sig] = true
		f.Reproduced = true
		if err := c.shrink(ctx, f); err != nil {
			return err
		}
		if c.Keep != nil {
			if err := c.Keep(f); err != nil {
				return err
			}
		}
	}
	return nil
}

// shrink delta-debugs one finding, keeping its signature.
func (c *Campaign) shrink(ctx context.Context, f *Finding) error {
	sig, outcome := f.Checked.Signature, f.Checked.Outcome
	test := func(ctx context.Context, s *oracle.Script) (bool, error) {
		res, err := c.Checker.Check(ctx, f.Case.Name, s, f.Case.Settings)
		if err != nil {
			if ctx.Err() != nil {
				return false, ctx.Err()
			}
			return false, nil // upstream could not run the candidate (a broken cancellation): not interesting
		}
		return res.Outcome == outcome && res.Signature == sig, nil
	}
	min, tests, err := Shrink(ctx, f.Case.Script, test)
	if err != nil {
		return err
	}
	f.Tests = tests
	// Check min itself once more, for the recording that is kept.
	res, err := c.Checker.Check(ctx, f.Case.Name, min, f.Case.Settings)
	if err != nil {
		return err
	}
	if res.Outcome != outcome || res.Signature != sig {
		c.logf("%s: the shrunk script gives %s %s on a last check: keeping the full case", f.Case.Name, res.Outcome, res.Signature)
		min, res = f.Case.Script, f.Checked
	}
	f.Minimal, f.MinimalChecked = min, res
	c.logf("%s: shrunk from %d to %d calls in %d tests: %s", f.Case.Name, f.Case.Script.Calls(), min.Calls(), tests, sig)
	return nil
}

// OnePerProfile is the first case of each profile for seed, in case
// order: a small budget that still meets every profile.
func OnePerProfile(seed uint64) []int {
	want := len(profiles())
	seen := map[string]bool{}
	var out []int
	for i := 0; len(seen) < want && i < 1000; i++ {
		if p := Generate(seed, i).Profile; !seen[p] {
			seen[p] = true
			out = append(out, i)
		}
	}
	return out
}
