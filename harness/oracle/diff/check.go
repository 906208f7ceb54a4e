package diff

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/dshsim/dshsim/harness/oracle"
	"github.com/dshsim/dshsim/harness/replay"
	"github.com/dshsim/dshsim/harness/replay/recording"
)

// Outcomes of checking one script.
const (
	// Match: upstream's recording replays through our stack and matches.
	Match = "match"
	// Mismatch: upstream reproduces its recording, ours differs.
	Mismatch = "mismatch"
	// Unstable: upstream does not reproduce its own recording (its events
	// depend on timing); the script says nothing about our stack.
	Unstable = "unstable"
	// Departure: ours differs where a named departure says it does.
	Departure = "departure"
)

// Checker runs a script through upstream (making a recording) and then the
// recording through our stack.
type Checker struct {
	Oracle *oracle.Oracle
	// Replay configures our replay.
	Replay replay.Options
	// Work is where the recording is written for our replay ("" = the
	// system's temp directory); each check removes what it wrote.
	Work string
	// Frontend is the front end upstream records through: "" (ACP) the
	// ACP agent ([oracle.Oracle.Record]), headless the product CLI's
	// headless profile ([oracle.Oracle.RecordHeadless]), goal the ACP
	// goal suite ([oracle.Oracle.RecordGoal]), jsonrpc the SDK's client
	// and server ([oracle.Oracle.RecordJSONRPC]).
	Frontend recording.Frontend
}

// Checked is the outcome of one check.
type Checked struct {
	Outcome string
	// Signature names the first difference without its values (the kind of
	// the first differing event and its field paths), so that a shrunk script
	// can be required to differ in the same way.
	Signature string
	// Detail is our replay's readable first difference.
	Detail   string
	Recorded *oracle.Recorded
	Ours     *replay.Result
	Duration time.Duration
}

// Times says where a check's wall time went: the whole, upstream's two
// passes (the refresh that records, the check that replays it) and our
// replay ("-" for a part that did not run).
func (c *Checked) Times() string {
	parts := []string{"-", "-", "-"}
	round := func(d time.Duration) string { return d.Round(1e8).String() }
	if r := c.Recorded; r != nil && r.Refresh != nil {
		parts[0] = round(r.Refresh.Duration)
	}
	if r := c.Recorded; r != nil && r.Check != nil {
		parts[1] = round(r.Check.Duration)
	}
	if c.Ours != nil {
		parts[2] = round(c.Ours.Duration)
	}
	return fmt.Sprintf("%s: upstream %s + %s, ours %s", round(c.Duration), parts[0], parts[1], parts[2])
}

// Check records s as name through upstream and replays the recording
// through our stack.
func (c *Checker) Check(ctx context.Context, name string, s *oracle.Script, set oracle.Settings) (*Checked, error) {
	start := time.Now()
	record := c.Oracle.Record
	switch c.Frontend {
	case recording.Headless:
		record = c.Oracle.RecordHeadless
	case recording.Goal:
		record = c.Oracle.RecordGoal
	case recording.JSONRPC:
		record = c.Oracle.RecordJSONRPC
	}
	rec, err := record(ctx, name, s, oracle.Options{Settings: set})
	if err != nil {
		return nil, err
	}
	out := &Checked{Recorded: rec}
	defer func() { out.Duration = time.Since(start) }()
	if !rec.Stable() {
		out.Outcome, out.Detail = Unstable, "upstream's replay of its own recording: "+rec.Check.Verdict()
		return out, nil
	}
	parent, err := os.MkdirTemp(c.Work, "dsh-oracle-diff-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(parent)
	dir := filepath.Join(parent, name) // the name sets upstream's spill root: keep it
	if err := rec.Write(dir); err != nil {
		return nil, err
	}
	res := replay.Replay(ctx, dir, c.Replay)
	out.Ours = res
	switch res.Verdict {
	case replay.Match:
		out.Outcome = Match
	default:
		out.Outcome, out.Signature, out.Detail = Mismatch, Signature(res), res.Summary()+"\n"+res.Detail()
		if d := departureOf(res); d != "" {
			out.Outcome, out.Detail = Departure, d+": "+out.Detail
		}
	}
	return out, nil
}

// digits are numbers in flags and errors (counts, seqs, ids): not part of
// a signature.
var digits = regexp.MustCompile(`[0-9]+`)

// Signature names a result's first difference without values: "error",
// "flag: <first flag>" or "<expected kind>/<got kind>: <field paths>".
func Signature(r *replay.Result) string {
	switch {
	case r.Verdict == replay.Failed:
		return "error: " + digits.ReplaceAllString(firstLine(r.Error), "N")
	case r.Comparison.First() != nil:
		p := r.Comparison.First()
		var e, g string
		if p.Expected != nil {
			e = p.Expected.Kind
		}
		if p.Got != nil {
			g = p.Got.Kind
		}
		var paths []string
		for _, d := range p.Diffs {
			paths = append(paths, d.Path)
		}
		return fmt.Sprintf("%s/%s: %s", e, g, strings.Join(paths, ","))
	case len(r.Flags) > 0:
		return "flag: " + digits.ReplaceAllString(firstLine(r.Flags[0]), "N")
	}
	return "mismatch"
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}
