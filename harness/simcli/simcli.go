package simcli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/dshsim/dshsim/harness"
	"github.com/dshsim/dshsim/harness/cmdline"
)

// maxDrifts is how many differing lines -check prints per file.
const maxDrifts = 3

// Main runs dsh-sim with args (without the program name) on the sims of
// table (cmd/dsh-sim passes harness/sims' table) and returns the exit
// status: the flags are parsed into options, then [run].
func Main(table []harness.Sim, args []string, stdout, stderr io.Writer) int {
	o := &options{table: table, stdout: stdout, stderr: stderr, set: map[string]bool{}}
	cmd := command(o)
	return cmd.Main(args, stdout, stderr, func(args []string) error {
		cmd.Flags.Visit(func(f *flag.Flag) { o.set[f.Name] = true })
		o.args = args
		return run(cmd, o)
	})
}

// run validates o, then lists, renders or runs the sims.
func run(cmd cmdline.Command, o *options) error {
	if err := o.validate(cmd); err != nil {
		return err
	}
	switch {
	case o.list:
		list(o)
		return nil
	case o.render != "":
		return renderPage(o)
	}
	removeDeadRuns(o)
	// SIGINT or SIGTERM: the running sim finishes (its temporary
	// directories are removed when it returns), no further sim starts, and
	// dsh-sim exits 130 or 143; a second signal ends it at once.
	ctx, in := cmdline.WithInterrupt(context.Background())
	defer in.Stop()
	r := &runner{o: o, fresh: map[string][]byte{}, interrupted: func() bool { return ctx.Err() != nil }}
	err := r.runSims()
	if s := in.Signal(); s != nil {
		fmt.Fprintf(o.stderr, "dsh-sim: interrupted (%v): stopped after the running sim, its temporary files removed\n", s)
		return cmdline.Status(in.Status(cmdline.ExitFailure))
	}
	return err
}

// removeDeadRuns removes the run directories that killed runs of this user
// left in $TMPDIR and the scratch root (harness.RemoveDeadRuns: never a
// live run's, nor another user's), one line on stderr each. A SIGKILL
// leaves a run no chance to remove its own; the next run does.
func removeDeadRuns(o *options) {
	removed, err := harness.RemoveDeadRuns(os.TempDir(), o.scratch)
	for _, d := range removed {
		fmt.Fprintf(o.stderr, "dsh-sim: removed %s, left by a killed run\n", d)
	}
	if err != nil {
		fmt.Fprintf(o.stderr, "dsh-sim: %v\n", err)
	}
}

// list prints the selected sims, one line each, with their files.
func list(o *options) {
	tw := tabwriter.NewWriter(o.stdout, 0, 4, 2, ' ', 0)
	for _, s := range o.selected {
		fmt.Fprintf(tw, "%s\t%s\n", s.Name, s.Summary)
		for _, f := range s.Files {
			fmt.Fprintf(tw, "\t  %s/%s\n", harness.SnapshotsDir, f)
		}
	}
	tw.Flush()
}

// runner runs the selected sims and writes or checks their files.
type runner struct {
	o           *options
	fresh       map[string][]byte // this run's output, by name under snapshots/
	interrupted func() bool       // a signal asked to stop
	tw          *tabwriter.Writer // one line per sim
	failed      bool
	details     []string // printed after the sims' lines
	nfiles      int      // files the sims produced
	nchanged    int      // files written that changed
}

func (r *runner) logf(format string, args ...any) {
	if r.o.verbose {
		fmt.Fprintf(r.o.stderr, format+"\n", args...)
	}
}

// runSims runs every selected sim, one report line each, then reports
// unclaimed files, the details, and the summary (-check: and the page).
func (r *runner) runSims() error {
	r.tw = tabwriter.NewWriter(r.o.stdout, 0, 4, 1, ' ', 0)
	for _, s := range r.o.selected {
		if r.interrupted() {
			r.tw.Flush()
			return cmdline.Status(cmdline.ExitFailure)
		}
		r.logf("dsh-sim: running %s", s.Name)
		files, err := harness.RunSim(s, r.o.rootDir, r.logf)
		if err != nil {
			r.failed = true
			fmt.Fprintf(r.tw, "FAIL\t%s\t%s\n", s.Name, firstLine(err.Error()))
			if firstLine(err.Error()) != err.Error() {
				r.details = append(r.details, err.Error())
			}
			continue
		}
		for name, data := range files {
			r.fresh[name] = data
		}
		r.nfiles += len(s.Files)
		if r.o.check {
			r.checkSim(s, files)
		} else {
			r.writeSim(s, files)
		}
	}
	r.tw.Flush()
	r.noteUnclaimed()
	for _, d := range r.details {
		fmt.Fprintln(r.o.stdout, d)
	}
	if r.o.check {
		return r.checkSummary()
	}
	return r.writeSummary()
}

// checkSim compares the sim's files with the committed ones.
func (r *runner) checkSim(s harness.Sim, files map[string][]byte) {
	bad := 0
	for _, name := range s.Files {
		d, total, err := harness.CompareFile(r.o.snapDir, name, r.o.snapShown+name, files[name], maxDrifts)
		if err != nil {
			d, total = []harness.Drift{{File: r.o.snapShown + name, Note: err.Error()}}, 1
		}
		if total > 0 {
			bad++
			r.details = append(r.details, strings.TrimSuffix(harness.FormatDrifts(d, total), "\n"))
		}
	}
	if bad > 0 {
		r.failed = true
		fmt.Fprintf(r.tw, "DRIFT\t%s\t%d of %d files differ\n", s.Name, bad, len(s.Files))
		return
	}
	fmt.Fprintf(r.tw, "ok\t%s\t%s\n", s.Name, plural(len(s.Files), "file"))
}

// writeSim writes the sim's files that changed.
func (r *runner) writeSim(s harness.Sim, files map[string][]byte) {
	changed, unwritten := 0, 0
	for _, name := range s.Files {
		c, err := harness.WriteFile(r.o.snapDir, name, files[name])
		if err != nil {
			unwritten++
			r.details = append(r.details, fmt.Sprintf("%s%s: %v", r.o.snapShown, name, err))
		}
		if c {
			changed++
		}
	}
	r.nchanged += changed
	if unwritten > 0 {
		r.failed = true
		fmt.Fprintf(r.tw, "FAIL\t%s\t%d of %d files not written\n", s.Name, unwritten, len(s.Files))
		return
	}
	fmt.Fprintf(r.tw, "ok\t%s\t%s, %d changed\n", s.Name, plural(len(s.Files), "file"), changed)
}

// noteUnclaimed adds the files in the sims' directories that no sim
// produces: a failure of a whole -check, a note otherwise.
func (r *runner) noteUnclaimed() {
	unclaimed, err := harness.UnclaimedFiles(r.o.snapDir, r.o.table)
	if err != nil {
		r.failed = true
		r.details = append(r.details, err.Error())
	}
	for _, f := range unclaimed {
		msg := fmt.Sprintf("%s%s: no registered sim produces this file (delete it, or register the sim that writes it)", r.o.snapShown, f)
		if r.o.check && r.o.re == nil {
			r.failed = true
			r.details = append(r.details, msg)
		} else {
			r.details = append(r.details, "note: "+msg)
		}
	}
}

// writeSummary is the last line of a write run.
func (r *runner) writeSummary() error {
	fmt.Fprintf(r.o.stdout, "dsh-sim: %s, %s in %s (%d changed)\n", plural(len(r.o.selected), "sim"), plural(r.nfiles, "file"), r.o.snapShown, r.nchanged)
	if r.failed {
		fmt.Fprintln(r.o.stdout, "dsh-sim: FAIL")
		return cmdline.Status(cmdline.ExitFailure)
	}
	return nil
}

// checkSummary ends a -check run: the summary, then (without -run) the
// docs page checked against the fresh run.
func (r *runner) checkSummary() error {
	const name = "dsh-sim -check"
	if !r.failed {
		fmt.Fprintf(r.o.stdout, "%s: %s, %s match %s\n", name, plural(len(r.o.selected), "sim"), plural(r.nfiles, "file"), r.o.snapShown)
	}
	if r.o.re == nil {
		if !r.checkPage() {
			r.failed = true
		}
	} else {
		fmt.Fprintf(r.o.stdout, "%s: -run given: docs page not checked\n", name)
	}
	if r.failed {
		fmt.Fprintf(r.o.stdout, "%s: FAIL (update on purpose with make sim, then review git diff)\n", name)
		return cmdline.Status(cmdline.ExitFailure)
	}
	return nil
}

func firstLine(s string) string {
	first, _, _ := strings.Cut(s, "\n")
	return first
}

func plural(n int, what string) string {
	if n == 1 {
		return fmt.Sprintf("1 %s", what)
	}
	return fmt.Sprintf("%d %ss", n, what)
}
