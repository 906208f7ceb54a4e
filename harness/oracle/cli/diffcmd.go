package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/dshsim/dshsim/harness/cmdline"
	"github.com/dshsim/dshsim/harness/oracle"
	"github.com/dshsim/dshsim/harness/oracle/diff"
	"github.com/dshsim/dshsim/harness/replay/recording"
)

func inputOf(rec *oracle.Recorded) (recording.Input, error) {
	var in recording.Input
	err := json.Unmarshal(rec.Files[recording.InputFile], &in)
	return in, err
}

// diffOptions are one dsh-oracle diff invocation.
type diffOptions struct {
	n, start, parallel int
	seed               uint64
	keep, noShrink     bool
	departures         bool
	dump, profile      string
	timeout            time.Duration
}

func diffMain(args []string, stdout, stderr io.Writer) int {
	var o diffOptions
	fs := flag.NewFlagSet(name+" diff", flag.ContinueOnError)
	fs.IntVar(&o.n, "n", 20, "number of generated scripts")
	fs.Uint64Var(&o.seed, "seed", 1, "the generator's seed: the same seed and case numbers make the same scripts")
	fs.IntVar(&o.start, "start", 0, "the first case number (a long campaign runs in slices: -start 0 -n 100, -start 100 -n 100, ...)")
	fs.IntVar(&o.parallel, "parallel", 2, "cases checked at once")
	fs.BoolVar(&o.keep, "keep", false, "write each minimal case into the tree: "+diff.RecordingsDir+"/<name> (a headless case: "+diff.HeadlessRecordingsDir+"/<name>) with NOTES.md, "+diff.GenDir+"/specs/<name>.json and its settings.tsv row (headless.tsv) (run from the repository root)")
	fs.StringVar(&o.dump, "o", "", "write every case that does not match (its script, upstream's recording and check, our first difference) to `DIR`/<name>; DIR is made if missing")
	fs.StringVar(&o.profile, "profile", "", "run only the cases of this `profile` among the N ("+strings.Join(diff.Profiles(), ", ")+"), or the N cases of profile "+diff.HeadlessProfile+" (scripts run through upstream's headless front end, the product CLI's headless profile) or "+diff.GoalProfile+" (through upstream's goal suite: the goal domain, round driver and tools)")
	fs.BoolVar(&o.departures, "departures", false, "treat cases that show a named departure as findings (shrink and, with -keep, keep them: a departure's test is its kept recording)")
	fs.BoolVar(&o.noShrink, "no-shrink", false, "report mismatches without shrinking them")
	fs.DurationVar(&o.timeout, "timeout", 0, "stop the campaign after this long (0: no limit)")
	cmd := cmdline.Command{Name: name + " diff", Flags: fs, NoArgs: true, Help: cmdline.HelpText(diffUsage, fs)}
	return cmd.Main(args, stdout, stderr, func([]string) error {
		if o.n < 1 || o.parallel < 1 || o.start < 0 {
			return cmdline.Usage("-n and -parallel must be at least 1, -start at least 0")
		}
		if o.dump != "" {
			if err := cmd.CheckOutDir(o.dump, false); err != nil {
				return cmdline.Usage("-o %s: %v", o.dump, err)
			}
		}
		if _, fe := diff.FrontendProfileOf(o.profile); o.keep && fe && o.profile != diff.HeadlessProfile {
			return cmdline.Usage("-keep with -profile %s: a %s case is not kept in the tree yet (-o DIR writes its recording for a look)", o.profile, o.profile)
		}
		if o.keep {
			if _, err := os.Stat("go.mod"); err != nil {
				return cmdline.Usage("-keep writes into the tree: run from the repository root (no go.mod here)")
			}
		}
		or, err := openOracle()
		if err != nil {
			return err
		}
		ctx, in := cmdline.WithInterrupt(context.Background())
		defer in.Stop()
		if o.timeout > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, o.timeout)
			defer cancel()
		}
		return runDiff(ctx, or, o, stdout)
	})
}

// treeAgent is the tree's agent scripts, from the repository root.
const treeAgent = "harness/oracle/agent"

const diffUsage = `usage: dsh-oracle diff [-n N] [-seed S] [-start K] [-parallel P] [-keep] [-no-shrink]

Generates N model scripts (cases K .. K+N-1 of seed S), has upstream record
each (a recording upstream does not reproduce is counted as unstable and
dropped), replays each recording through our stack, and reports. The first
case of each kind of mismatch is recorded again (it must differ the same
way) and shrunk by delta debugging over its calls, their arguments, its
files and its answers.

`

// runDiff runs the campaign and prints its report; a mismatch fails.
func runDiff(ctx context.Context, or *oracle.Oracle, o diffOptions, stdout io.Writer) error {
	// run from the repository: the installed oracle must be this tree's
	if _, err := os.Stat(treeAgent); err == nil {
		if err := or.SameAgent(treeAgent); err != nil {
			return err
		}
	}
	c := &diff.Campaign{
		Checker:    &diff.Checker{Oracle: or},
		Seed:       o.seed,
		Start:      o.start,
		N:          o.n,
		Parallel:   o.parallel,
		Shrink:     !o.noShrink,
		Departures: o.departures,
		Log:        stdout,
	}
	if fp, ok := diff.FrontendProfileOf(o.profile); ok {
		c.Generate, c.Checker.Frontend = fp.Generate, fp.Frontend
	} else if o.profile != "" {
		c.Indices = []int{}
		for i := o.start; i < o.start+o.n; i++ {
			if diff.Generate(o.seed, i).Profile == o.profile {
				c.Indices = append(c.Indices, i)
			}
		}
		if len(c.Indices) == 0 {
			return cmdline.NoMatch("case", "-profile "+o.profile, fmt.Sprintf("cases %d..%d of seed %d", o.start, o.start+o.n-1, o.seed))
		}
	}
	if o.keep {
		c.Keep = diff.KeepIn(".")
	}
	if o.dump != "" {
		if err := os.MkdirAll(o.dump, 0o755); err != nil {
			return err
		}
		c.Dump = diff.DumpIn(o.dump)
	}
	start := time.Now()
	rep, err := c.Run(ctx)
	if rep != nil {
		printReport(stdout, rep, time.Since(start))
	}
	if err != nil {
		return err
	}
	if len(rep.Findings) > 0 || len(rep.Errors) > 0 {
		return cmdline.Status(cmdline.ExitFailure)
	}
	return nil
}

func printReport(w io.Writer, rep *diff.Report, took time.Duration) {
	fmt.Fprintf(w, "\nscripts run: %d (%s): %d match, %d mismatch, %d unstable upstream (dropped), %d named departures, %d upstream errors\n",
		rep.Run, took.Round(time.Second), rep.Matched, len(rep.Findings), rep.Unstable, rep.Departures, len(rep.Errors))
	if len(rep.UnstableCases) > 0 {
		fmt.Fprintf(w, "  unstable upstream: %s\n", strings.Join(rep.UnstableCases, " "))
	}
	sigs := rep.Signatures()
	keys := make([]string, 0, len(sigs))
	for k := range sigs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(w, "  %s: %s\n", k, strings.Join(sigs[k], " "))
	}
	for _, f := range rep.Findings {
		if f.Minimal != nil {
			fmt.Fprintf(w, "minimal case %s (%d calls, %d tests): %s\n", f.Case.Name, f.Minimal.Calls(), f.Tests, firstLineOf(f.MinimalChecked.Detail))
		}
	}
	for _, e := range rep.Errors {
		fmt.Fprintf(w, "upstream error: %s\n", firstLineOf(e))
	}
}

func firstLineOf(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}
