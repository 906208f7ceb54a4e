package simcli

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/dshsim/dshsim/harness"
	"github.com/dshsim/dshsim/harness/cmdline"
	"github.com/dshsim/dshsim/sandbox/sandboxtest"
)

// options are one dsh-sim invocation: the flags as parsed ([command]), then
// checked and resolved by validate before anything runs.
type options struct {
	check, list, verbose             bool
	pattern, out, root, page, render string
	set                              map[string]bool // the flags given
	args                             []string
	table                            []harness.Sim
	stdout, stderr                   io.Writer

	resolved
}

// resolved is what validate resolves from the options.
type resolved struct {
	rootDir            string         // absolute; "" for -list without -root
	re                 *regexp.Regexp // nil: every sim
	selected           []harness.Sim  // the sims to run or list
	snapDir, snapShown string         // where the effect files are, as shown
	pageText           []byte         // -render's page
	scratch            string         // the scratch root, when sims run
}

// command is dsh-sim's flag set, parsing into o.
func command(o *options) cmdline.Command {
	fs := flag.NewFlagSet("dsh-sim", flag.ContinueOnError)
	fs.BoolVar(&o.check, "check", false, "")
	fs.BoolVar(&o.list, "list", false, "")
	fs.BoolVar(&o.verbose, "v", false, "")
	fs.StringVar(&o.pattern, "run", "", "")
	fs.StringVar(&o.out, "o", "", "")
	fs.StringVar(&o.root, "root", "", "")
	fs.StringVar(&o.page, "page", "", "")
	fs.StringVar(&o.render, "render", "", "")
	return cmdline.Command{Name: "dsh-sim", Flags: fs, Help: func(w io.Writer) { io.WriteString(w, Usage) }}
}

// validate checks the options and resolves the paths and the selection:
// every problem of the command line is a usage error; a selection that
// matches nothing is [cmdline.NoMatch].
func (o *options) validate(cmd cmdline.Command) error {
	if err := o.validateFlags(); err != nil {
		return err
	}
	if err := o.resolveRoot(); err != nil {
		return err
	}
	if o.render != "" {
		return o.validateRender(cmd)
	}
	if !o.list {
		// The sims make their workspaces under it (and a killed run's are
		// removed from it): checked before any sim runs.
		scratch, err := sandboxtest.UsableScratchRoot()
		if err != nil {
			return cmdline.Usage("%v", err)
		}
		o.scratch = scratch
	}
	if o.set["o"] {
		if err := cmd.CheckOutDir(o.out, o.check); err != nil {
			if errors.Is(err, cmdline.ErrNoSuchDir) {
				err = errors.New("no such directory (-check compares with the files in it)")
			}
			return cmdline.Usage("-o %s: %v", o.out, err)
		}
		o.snapDir, o.snapShown = o.out, strings.TrimSuffix(o.out, "/")+"/"
	}
	return o.selectSims()
}

// validateFlags checks the flags against each other.
func (o *options) validateFlags() error {
	if len(o.args) > 0 {
		return cmdline.Usage("unexpected argument %q", o.args[0])
	}
	modes := 0
	for _, b := range []bool{o.check, o.list, o.render != ""} {
		if b {
			modes++
		}
	}
	switch {
	case modes > 1:
		return cmdline.Usage("-check, -list and -render are separate modes; give one")
	case o.set["page"] && !o.check:
		return cmdline.Usage("-page applies to -check only (use -render PAGE to render a page)")
	case o.render != "" && o.pattern != "":
		return cmdline.Usage("-render runs no sims; -run does not apply")
	case o.list && o.set["o"]:
		return cmdline.Usage("-list writes nothing; -o does not apply")
	}
	if o.pattern != "" {
		re, err := regexp.Compile(o.pattern)
		if err != nil {
			return cmdline.Usage("-run: %v", err)
		}
		o.re = re
	}
	return nil
}

// resolveRoot checks -root the same way in every mode that names it (the
// repository root; -render: any directory) and finds the root from the
// current directory when it is not given; -list reads nothing of the
// repository and needs none.
func (o *options) resolveRoot() error {
	if o.root == "" {
		if o.list {
			return nil
		}
		cwd, err := os.Getwd()
		if err == nil {
			o.rootDir, err = harness.FindRoot(cwd)
		}
		if err != nil {
			return cmdline.Usage("%v (give -root)", err)
		}
	} else {
		abs, err := filepath.Abs(o.root)
		if err == nil {
			err = checkRoot(abs, o.render != "")
		}
		if err != nil {
			return cmdline.Usage("-root %s: %v", o.root, err)
		}
		o.rootDir = abs
	}
	o.snapDir, o.snapShown = filepath.Join(o.rootDir, harness.SnapshotsDir), harness.SnapshotsDir+"/"
	return nil
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

// validateRender reads -render's page, which must be a text file, and
// checks that -o FILE can be written and is not the page.
func (o *options) validateRender(cmd cmdline.Command) error {
	data, err := readText(o.render)
	if err != nil {
		return cmdline.Usage("-render %s: %v", o.render, err)
	}
	o.pageText = data
	if o.out != "" {
		if err := cmd.CheckOutFile(o.out); err != nil {
			return cmdline.Usage("-o %s: %v", o.out, err)
		}
		if sameFile(o.out, o.render) {
			return cmdline.Usage("-o %s: is the page -render reads (write the expanded page elsewhere)", o.out)
		}
	}
	return nil
}

// readText reads a page: a regular file of UTF-8 text without NUL bytes (a
// binary file would be "rendered" into garbage).
func readText(path string) ([]byte, error) {
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, errors.New("no such file")
	case err != nil:
		return nil, err
	case fi.IsDir():
		return nil, errors.New("is a directory (want the page, a text file)")
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if i := bytes.IndexByte(data, 0); i >= 0 {
		return nil, fmt.Errorf("not a text file (a NUL byte at offset %d)", i)
	}
	for i := 0; i < len(data); {
		r, n := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && n == 1 {
			return nil, fmt.Errorf("not a text file (invalid UTF-8 at offset %d)", i)
		}
		i += n
	}
	return data, nil
}

// selectSims checks the table and keeps the sims -run selects.
func (o *options) selectSims() error {
	if err := harness.CheckSims(o.table); err != nil {
		return fmt.Errorf("the sim table: %w", err)
	}
	if len(o.table) == 0 {
		return errors.New("no sims in the table (package harness/sims lists them)")
	}
	names := make([]string, len(o.table))
	for i, s := range o.table {
		names[i] = s.Name
		if o.re == nil || o.re.MatchString(s.Name) {
			o.selected = append(o.selected, s)
		}
	}
	if len(o.selected) == 0 {
		return cmdline.NoMatch("sim", fmt.Sprintf("-run %q", o.pattern), "sims: "+strings.Join(names, ", "))
	}
	return nil
}
