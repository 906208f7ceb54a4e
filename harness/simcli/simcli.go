package simcli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"text/tabwriter"

	"github.com/dshsim/dshsim/harness"
	"github.com/dshsim/dshsim/harness/cmdline"
	"github.com/dshsim/dshsim/harness/snippets"
)

// Usage is the text dsh-sim -h prints.
const Usage = `usage: dsh-sim [-check] [-run PATTERN] [-o DIR] [-root DIR] [-page FILE] [-v]
       dsh-sim -list [-run PATTERN]
       dsh-sim -render PAGE [-o FILE] [-root DIR]

dsh-sim runs the registered simulations ("sims", package harness/sims). Each
sim drives the real stack (real Landlock and bwrap, real processes, real
files; only what the docs page names as constructed is constructed) and
produces effect files, which dsh-sim writes under snapshots/ in the
repository (e.g. snapshots/txt/profiles.txt). Paths, times and ids in them
are normalised (<ws>, <tmp>, <time>, <uuid-N>), so a run is deterministic on a
machine class.

Modes:
  (default)   run the sims and write their files; unchanged files are left
              alone. This is how goldens are updated on purpose: run it (or
              make sim), then review git diff snapshots/.
  -check      run the sims in memory and compare line by line with the
              committed files. Prints, per drifted file, the first differing
              lines as file:line with want (committed) and got (fresh); reports
              missing files, and files in the sims' directories (txt/, out/)
              that no sim produces.
              Without -run it then resolves every --8<-- include of the docs
              page (-page, default docs/tools.md): a missing page or one
              without includes fails, and so does a missing file, a missing
              section, a range past the end of a file, or an included effect
              file that is stale against the fresh run (named with the page
              line).
  -list       print the sims, one line each, with the files they write.
  -render PAGE
              write PAGE with every include expanded (plain Markdown, no
              mkdocs needed) to -o FILE, or stdout.

Flags:
  -run PATTERN  only sims whose name matches the regular expression
  -o DIR        snapshot directory to write or check (default: snapshots/ at
                the repository root); -check needs it to exist, writing makes
                it but not its parents; with -render, the output file
  -root DIR     repository root (default: found from the current directory,
                the first parent whose go.mod declares github.com/dshsim/dshsim;
                a -root without that go.mod is refused, except with -render,
                where any directory does); sims read inputs (transcripts/)
                from it and page includes are relative to it, except
                snapshots/... which name files in -o
  -page FILE    docs page checked by -check (default docs/tools.md under the root)
  -v            log sim progress to stderr
  -h            this help

Include forms on the page (mkdocs pymdown snippets style; paths relative to
the repository root):
  --8<-- "snapshots/txt/profiles.txt"            whole file
  --8<-- "snapshots/txt/landlock-runs.txt:1:28"  lines 1-28, 1-based, inclusive
  --8<-- "sandbox/confine.go:backend-chain"      section between the comments
                                                 // --8<-- [start:backend-chain]
                                                 // --8<-- [end:backend-chain]

Updating goldens:
  make sim                    rewrite snapshots/ with dsh-sim, then dsh-sim -check
  DSHSIM_UPDATE=1 go test ./...
                              update every golden at once: effect files
                              (harness/sims tests), package goldens
                              (harness.Golden) and testscript scripts (scenarios/)

Exit status: 0 all well; 1 a sim failed, a file drifted, is missing, is
unclaimed or could not be written, or the page is missing or an include is
broken or stale; 2 usage error (one line on stderr: a bad flag or argument,
a -root that is not the repository, a -o that cannot be used).
`

// maxDrifts is how many differing lines -check prints per file.
const maxDrifts = 3

// Main runs dsh-sim with args (without the program name) on the registered
// sims and returns the exit status.
func Main(args []string, stdout, stderr io.Writer) int {
	return mainWith(args, stdout, stderr, harness.Sims)
}

type options struct {
	check, list, verbose bool
	run, out, root, page string
	render               string
	pageSet, outSet      bool
}

func mainWith(args []string, stdout, stderr io.Writer, sims func() []harness.Sim) int {
	fset := flag.NewFlagSet("dsh-sim", flag.ContinueOnError)
	var o options
	fset.BoolVar(&o.check, "check", false, "")
	fset.BoolVar(&o.list, "list", false, "")
	fset.BoolVar(&o.verbose, "v", false, "")
	fset.StringVar(&o.run, "run", "", "")
	fset.StringVar(&o.out, "o", "", "")
	fset.StringVar(&o.root, "root", "", "")
	fset.StringVar(&o.page, "page", "", "")
	fset.StringVar(&o.render, "render", "", "")
	cmd := cmdline.Command{Name: "dsh-sim", Flags: fset, Help: func(w io.Writer) { io.WriteString(w, Usage) }}
	if code, ok := cmd.Parse(args, stdout, stderr); !ok {
		return code
	}
	fset.Visit(func(f *flag.Flag) {
		o.pageSet = o.pageSet || f.Name == "page"
		o.outSet = o.outSet || f.Name == "o"
	})
	if fset.NArg() > 0 {
		return cmd.Usagef(stderr, "unexpected argument %q", fset.Arg(0))
	}
	modes := 0
	for _, b := range []bool{o.check, o.list, o.render != ""} {
		if b {
			modes++
		}
	}
	if modes > 1 {
		return cmd.Usagef(stderr, "-check, -list and -render are separate modes; give one")
	}
	var re *regexp.Regexp
	if o.run != "" {
		var err error
		if re, err = regexp.Compile(o.run); err != nil {
			return cmd.Usagef(stderr, "-run: %v", err)
		}
	}
	if o.pageSet && !o.check {
		return cmd.Usagef(stderr, "-page applies to -check only (use -render PAGE to render a page)")
	}
	if o.render != "" && o.run != "" {
		return cmd.Usagef(stderr, "-render runs no sims; -run does not apply")
	}
	if o.list {
		return list(stdout, stderr, sims(), re)
	}

	root := o.root
	if root == "" {
		cwd, err := os.Getwd()
		if err == nil {
			root, err = harness.FindRoot(cwd)
		}
		if err != nil {
			return cmd.Usagef(stderr, "%v (give -root)", err)
		}
	} else {
		abs, err := filepath.Abs(root)
		if err == nil {
			err = checkRoot(abs, o.render != "")
		}
		if err != nil {
			return cmd.Usagef(stderr, "-root %s: %v", o.root, err)
		}
		root = abs
	}
	snapDir, snapShown := filepath.Join(root, harness.SnapshotsDir), harness.SnapshotsDir+"/"
	if o.outSet && o.render == "" {
		if err := checkOut(o.out, o.check); err != nil {
			return cmd.Usagef(stderr, "-o %s: %v", o.out, err)
		}
		snapDir, snapShown = o.out, strings.TrimSuffix(o.out, "/")+"/"
	}
	r := &runner{o: o, root: root, snapDir: snapDir, snapShown: snapShown, stdout: stdout, stderr: stderr, all: sims()}
	if o.render != "" {
		return r.renderPage()
	}
	// SIGINT or SIGTERM: the running sim finishes (its temporary
	// directories are removed when it returns), no further sim starts, and
	// dsh-sim exits 130 or 143; a second signal ends it at once.
	ctx, in := cmdline.WithInterrupt(context.Background())
	defer in.Stop()
	r.interrupted = func() bool { return ctx.Err() != nil }
	code := r.runSims(re)
	if s := in.Signal(); s != nil {
		fmt.Fprintf(stderr, "dsh-sim: interrupted (%v): stopped after the running sim, its temporary files removed\n", s)
		return in.Status(code)
	}
	return code
}

// checkRoot says what is wrong with -root dir: the sims read the repository
// (transcripts/, the module's packages), so it must be the repository root;
// -render only resolves the page's includes against it, so any directory
// does.
func checkRoot(dir string, render bool) error {
	if !render {
		return harness.IsRoot(dir)
	}
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return errors.New("no such directory")
	case err != nil:
		return err
	case !fi.IsDir():
		return errors.New("not a directory")
	}
	return nil
}

// checkOut says what is wrong with -o dir: -check reads an existing
// directory; writing makes dir, but not its parents (a mistyped path must not
// grow a tree).
func checkOut(dir string, check bool) error {
	fi, err := os.Stat(dir)
	switch {
	case err == nil && !fi.IsDir():
		return errors.New("not a directory")
	case err == nil:
		return nil
	case !errors.Is(err, fs.ErrNotExist):
		return err
	case check:
		return errors.New("no such directory (-check compares with the files in it)")
	}
	parent := filepath.Dir(filepath.Clean(dir))
	if fi, err := os.Stat(parent); err != nil || !fi.IsDir() {
		return fmt.Errorf("its parent %s is not a directory (dsh-sim makes the directory, not its parents)", parent)
	}
	return nil
}

func list(stdout, stderr io.Writer, all []harness.Sim, re *regexp.Regexp) int {
	sel := selectSims(all, re)
	if len(sel) == 0 {
		fmt.Fprintln(stderr, noSims(all, re))
		return 1
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	for _, s := range sel {
		fmt.Fprintf(tw, "%s\t%s\n", s.Name, s.Summary)
		for _, f := range s.Files {
			fmt.Fprintf(tw, "\t  %s/%s\n", harness.SnapshotsDir, f)
		}
	}
	tw.Flush()
	return 0
}

func selectSims(all []harness.Sim, re *regexp.Regexp) []harness.Sim {
	var sel []harness.Sim
	for _, s := range all {
		if re == nil || re.MatchString(s.Name) {
			sel = append(sel, s)
		}
	}
	return sel
}

func noSims(all []harness.Sim, re *regexp.Regexp) string {
	if len(all) == 0 {
		return "dsh-sim: no sims registered (package harness/sims registers them from init functions)"
	}
	names := make([]string, len(all))
	for i, s := range all {
		names[i] = s.Name
	}
	return fmt.Sprintf("dsh-sim: no sim matches -run %q (sims: %s)", re.String(), strings.Join(names, ", "))
}

type runner struct {
	o                  options
	root               string
	snapDir, snapShown string
	stdout, stderr     io.Writer
	all                []harness.Sim
	fresh              map[string][]byte // this run's output, by name under snapshots/
	interrupted        func() bool       // a signal asked to stop (nil: never)
}

func (r *runner) logf(format string, args ...any) {
	if r.o.verbose {
		fmt.Fprintf(r.stderr, format+"\n", args...)
	}
}

func (r *runner) runSims(re *regexp.Regexp) int {
	sel := selectSims(r.all, re)
	if len(sel) == 0 {
		fmt.Fprintln(r.stdout, noSims(r.all, re))
		return 1
	}
	failed := false
	r.fresh = map[string][]byte{}
	nfiles, nchanged := 0, 0
	tw := tabwriter.NewWriter(r.stdout, 0, 4, 1, ' ', 0)
	var details []string
	for _, s := range sel {
		if r.interrupted != nil && r.interrupted() {
			tw.Flush()
			return 1
		}
		r.logf("dsh-sim: running %s", s.Name)
		files, err := harness.RunSim(s, r.root, r.logf)
		if err != nil {
			failed = true
			fmt.Fprintf(tw, "FAIL\t%s\t%s\n", s.Name, firstLine(err.Error()))
			if firstLine(err.Error()) != err.Error() {
				details = append(details, err.Error())
			}
			continue
		}
		for name, data := range files {
			r.fresh[name] = data
		}
		nfiles += len(s.Files)
		if r.o.check {
			bad := 0
			for _, name := range s.Files {
				d, total, err := harness.CompareFile(r.snapDir, name, r.snapShown+name, files[name], maxDrifts)
				if err != nil {
					d, total = []harness.Drift{{File: r.snapShown + name, Note: err.Error()}}, 1
				}
				if total > 0 {
					bad++
					details = append(details, strings.TrimSuffix(harness.FormatDrifts(d, total), "\n"))
				}
			}
			if bad > 0 {
				failed = true
				fmt.Fprintf(tw, "DRIFT\t%s\t%d of %d files differ\n", s.Name, bad, len(s.Files))
			} else {
				fmt.Fprintf(tw, "ok\t%s\t%s\n", s.Name, plural(len(s.Files), "file"))
			}
			continue
		}
		changed, unwritten := 0, 0
		for _, name := range s.Files {
			c, err := harness.WriteFile(r.snapDir, name, files[name])
			if err != nil {
				unwritten++
				details = append(details, fmt.Sprintf("%s%s: %v", r.snapShown, name, err))
			}
			if c {
				changed++
			}
		}
		nchanged += changed
		if unwritten > 0 {
			failed = true
			fmt.Fprintf(tw, "FAIL\t%s\t%d of %d files not written\n", s.Name, unwritten, len(s.Files))
			continue
		}
		fmt.Fprintf(tw, "ok\t%s\t%s, %d changed\n", s.Name, plural(len(s.Files), "file"), changed)
	}
	tw.Flush()
	orphans, err := r.orphans()
	if err != nil {
		failed = true
		details = append(details, err.Error())
	}
	for _, o := range orphans {
		msg := fmt.Sprintf("%s%s: no registered sim produces this file (delete it, or register the sim that writes it)", r.snapShown, o)
		if r.o.check && re == nil {
			failed = true
			details = append(details, msg)
		} else {
			details = append(details, "note: "+msg)
		}
	}
	for _, d := range details {
		fmt.Fprintln(r.stdout, d)
	}
	name := "dsh-sim"
	if r.o.check {
		name = "dsh-sim -check"
	}
	if !r.o.check {
		fmt.Fprintf(r.stdout, "%s: %s, %s in %s (%d changed)\n", name, plural(len(sel), "sim"), plural(nfiles, "file"), r.snapShown, nchanged)
		if failed {
			fmt.Fprintf(r.stdout, "%s: FAIL\n", name)
			return 1
		}
		return 0
	}
	if !failed {
		fmt.Fprintf(r.stdout, "%s: %s, %s match %s\n", name, plural(len(sel), "sim"), plural(nfiles, "file"), r.snapShown)
	}
	if re == nil {
		if !r.checkPage() {
			failed = true
		}
	} else {
		fmt.Fprintf(r.stdout, "%s: -run given: docs page not checked\n", name)
	}
	if failed {
		fmt.Fprintf(r.stdout, "%s: FAIL (update on purpose with make sim, then review git diff)\n", name)
		return 1
	}
	return 0
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

func (r *runner) orphans() ([]string, error) { return harness.UnclaimedFiles(r.snapDir, r.all) }

// source is [PageSource] for this run.
func (r *runner) source() snippets.Source {
	return PageSource(r.root, r.snapDir, r.fresh, r.all)
}

// PageSource maps the include paths of a docs page to files: snapshots/...
// to snapDir, everything else to root. When fresh is not nil (the files of
// a run, keyed by name under snapshots/), the source also answers
// [snippets.Source.Fresh]: a snapshots/ file of the run is fresh; one whose
// sim is registered but did not produce it (failed or not selected) is not
// compared; one no sim in all produces is an error.
func PageSource(root, snapDir string, fresh map[string][]byte, all []harness.Sim) snippets.Source {
	src := snippets.Source{Read: func(p string) ([]byte, error) {
		if rest, ok := strings.CutPrefix(p, harness.SnapshotsDir+"/"); ok {
			return os.ReadFile(filepath.Join(snapDir, filepath.FromSlash(rest)))
		}
		return os.ReadFile(filepath.Join(root, filepath.FromSlash(p)))
	}}
	if fresh == nil {
		return src
	}
	src.Fresh = func(p string) ([]byte, bool, error) {
		rest, ok := strings.CutPrefix(p, harness.SnapshotsDir+"/")
		if !ok {
			return nil, false, nil
		}
		if data, ok := fresh[rest]; ok {
			return data, true, nil
		}
		for _, s := range all {
			for _, f := range s.Files {
				if f == rest {
					return nil, false, nil
				}
			}
		}
		return nil, false, fmt.Errorf("no registered sim produces %s", p)
	}
	return src
}

// checkPage resolves the docs page's includes against the fresh run.
func (r *runner) checkPage() bool {
	page, shown := r.o.page, r.o.page
	if !r.o.pageSet {
		page, shown = filepath.Join(r.root, "docs", "tools.md"), "docs/tools.md"
	}
	data, err := os.ReadFile(page)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			fmt.Fprintf(r.stdout, "dsh-sim -check: %s: missing (the docs page that includes the effect files; -page names another)\n", shown)
			return false
		}
		fmt.Fprintf(r.stdout, "dsh-sim -check: %v\n", err)
		return false
	}
	res, err := snippets.Check(shown, data, r.source())
	if err != nil {
		fmt.Fprintln(r.stdout, err)
		return false
	}
	if res.Includes == 0 {
		fmt.Fprintf(r.stdout, "dsh-sim -check: %s: no --8<-- includes, nothing to check (is it the docs page?)\n", shown)
		return false
	}
	fmt.Fprintf(r.stdout, "dsh-sim -check: %s: %s resolved, %d checked against the fresh run\n",
		shown, plural(res.Includes, "include"), res.Fresh)
	return true
}

// renderPage writes the page with every include expanded.
func (r *runner) renderPage() int {
	data, err := os.ReadFile(r.o.render)
	if err != nil {
		fmt.Fprintf(r.stderr, "dsh-sim: %v\n", err)
		return 1
	}
	out, err := snippets.Render(r.o.render, data, r.source())
	if err != nil {
		fmt.Fprintln(r.stderr, err)
		fmt.Fprintf(r.stderr, "dsh-sim: -render %s: FAIL\n", r.o.render)
		return 1
	}
	if r.o.out == "" {
		_, err = r.stdout.Write(out)
	} else {
		err = os.WriteFile(r.o.out, out, 0o644)
	}
	if err != nil {
		fmt.Fprintf(r.stderr, "dsh-sim: %v\n", err)
		return 1
	}
	return 0
}
