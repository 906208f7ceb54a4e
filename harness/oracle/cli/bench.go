package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"time"

	"github.com/dshsim/dshsim/harness/cmdline"
	"github.com/dshsim/dshsim/harness/oracle"
	"github.com/dshsim/dshsim/harness/replay"
	"github.com/dshsim/dshsim/harness/replay/recording"
)

const benchUsage = `usage: dsh-oracle bench [-rounds R] [DIR]

Replay speed on the same recordings (default: transcripts; those the oracle's
overlay cannot run are skipped and named), side by side in one run: for each round and each recording, upstream's suite through the
oracle and then our replay (dsh-replay's Replay: an isolated child replaying
through the real stack) (run.mjs: node starts upstream's agent
and its snapshot harness compares). Both run sequentially, one recording at
a time. Prints the median per recording, the totals of the medians and the
ratio upstream/ours; every run must match.

`

func benchMain(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet(name+" bench", flag.ContinueOnError)
	rounds := fs.Int("rounds", 3, "rounds over the recordings (the median of each recording is reported)")
	cmd := cmdline.Command{Name: name + " bench", Flags: fs, Help: cmdline.HelpText(benchUsage, fs)}
	return cmd.Main(args, stdout, stderr, func(args []string) error {
		if *rounds < 1 {
			return cmdline.Usage("-rounds must be at least 1")
		}
		if len(args) == 0 {
			args = []string{"transcripts"}
		}
		dirs, err := replay.Discover(args)
		if err != nil {
			return cmdline.Usage("%v", err)
		}
		o, err := openOracle()
		if err != nil {
			return err
		}
		ctx, in := cmdline.WithInterrupt(context.Background())
		defer in.Stop()
		b, err := Bench(ctx, o, dirs, *rounds)
		if err != nil {
			return err
		}
		b.Print(stdout)
		return nil
	})
}

// BenchResult is the replay speed of ours and upstream's on the same
// recordings, measured in one run.
type BenchResult struct {
	Names []string
	// Skipped are the recordings the oracle's overlay cannot run, with why.
	Skipped []string
	// Ours and Upstream are each recording's times, one per round.
	Ours, Upstream [][]time.Duration
}

// Bench replays each recording with upstream's suite and then ours, rounds
// times, sequentially. A recording upstream does not reproduce in the first
// round is skipped and named; any other run that does not match is an
// error: speed of a wrong replay means nothing.
func Bench(ctx context.Context, o *oracle.Oracle, dirs []string, rounds int) (*BenchResult, error) {
	b := &BenchResult{}
	var sets []oracle.Settings
	var kept []string
	for _, d := range dirs {
		rec, err := recording.Load(d)
		if err != nil {
			return nil, err
		}
		set, err := oracle.SettingsOf(rec)
		if err != nil {
			b.Skipped = append(b.Skipped, err.Error())
			continue
		}
		b.Names, sets, kept = append(b.Names, filepath.Base(d)), append(sets, set), append(kept, d)
	}
	if len(kept) == 0 {
		return nil, fmt.Errorf("none of the recordings can run under the oracle's overlay")
	}
	dirs = kept
	b.Ours, b.Upstream = make([][]time.Duration, len(dirs)), make([][]time.Duration, len(dirs))
	skip := make([]bool, len(dirs))
	for round := range rounds {
		for i, d := range dirs {
			if skip[i] {
				continue
			}
			u, err := o.Replay(ctx, d, oracle.Options{Settings: sets[i]})
			if err != nil {
				return nil, err
			}
			if !u.Match() {
				if round > 0 {
					return nil, fmt.Errorf("upstream: %s: %s (it matched in an earlier round)", b.Names[i], u.Verdict())
				}
				skip[i] = true
				b.Skipped = append(b.Skipped, fmt.Sprintf("%s: upstream's suite does not reproduce it (%s)", b.Names[i], u.Verdict()))
				continue
			}
			r := replay.Replay(ctx, d, replay.Options{})
			if r.Verdict != replay.Match {
				return nil, fmt.Errorf("ours: %s", r.Summary())
			}
			b.Ours[i] = append(b.Ours[i], r.Duration)
			b.Upstream[i] = append(b.Upstream[i], u.Duration)
		}
	}
	return b, nil
}

func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

// Totals are the sums of the per-recording medians.
func (b *BenchResult) Totals() (ours, upstream time.Duration) {
	for i := range b.Names {
		if len(b.Ours[i]) == 0 {
			continue // skipped
		}
		ours += median(b.Ours[i])
		upstream += median(b.Upstream[i])
	}
	return ours, upstream
}

// Print writes the table: per recording the medians and their ratio, then
// the totals and the overall ratio.
func (b *BenchResult) Print(w io.Writer) {
	fmt.Fprintf(w, "%-28s %10s %10s %8s\n", "recording", "ours", "upstream", "ratio")
	n := 0
	for i, name := range b.Names {
		if len(b.Ours[i]) == 0 {
			continue
		}
		n++
		om, um := median(b.Ours[i]), median(b.Upstream[i])
		fmt.Fprintf(w, "%-28s %10s %10s %7.1fx\n", name, om.Round(time.Millisecond), um.Round(time.Millisecond), float64(um)/float64(om))
	}
	ours, up := b.Totals()
	for _, s := range b.Skipped {
		fmt.Fprintf(w, "skipped (the oracle cannot run it): %s\n", s)
	}
	fmt.Fprintf(w, "%-28s %10s %10s %7.1fx\n", fmt.Sprintf("total (%d, sequential)", n), ours.Round(time.Millisecond), up.Round(time.Millisecond), float64(up)/float64(ours))
}
