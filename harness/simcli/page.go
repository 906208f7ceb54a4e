package simcli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/dshsim/dshsim/harness"
	"github.com/dshsim/dshsim/harness/cmdline"
	"github.com/dshsim/dshsim/harness/snippets"
)

// PageSource maps the include paths of a docs page to files: snapshots/...
// to snapDir, everything else to root. When fresh is not nil (the files of
// a run, keyed by name under snapshots/), the source also answers
// [snippets.Source.Fresh]: a snapshots/ file of the run is fresh; one whose
// sim is registered but did not produce it (failed or not selected) is not
// compared; one no sim in all produces is an error.
func PageSource(root, snapDir string, fresh map[string][]byte, all []harness.Sim) snippets.Source {
	src := snippets.Source{Read: func(p string) ([]byte, error) {
		return os.ReadFile(pageFile(root, snapDir, p))
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

// pageFile is the file an include path of a docs page names: snapshots/...
// under snapDir, anything else under root.
func pageFile(root, snapDir, p string) string {
	if rest, ok := strings.CutPrefix(p, harness.SnapshotsDir+"/"); ok {
		return filepath.Join(snapDir, filepath.FromSlash(rest))
	}
	return filepath.Join(root, filepath.FromSlash(p))
}

// checkPage resolves the docs page's includes against the fresh run.
func (r *runner) checkPage() bool {
	page, shown := r.o.page, r.o.page
	if !r.o.set["page"] {
		page, shown = filepath.Join(r.o.rootDir, "docs", "tools.md"), "docs/tools.md"
	}
	data, err := os.ReadFile(page)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			fmt.Fprintf(r.o.stdout, "dsh-sim -check: %s: missing (the docs page that includes the effect files; -page names another)\n", shown)
			return false
		}
		fmt.Fprintf(r.o.stdout, "dsh-sim -check: %v\n", err)
		return false
	}
	res, err := snippets.Check(shown, data, PageSource(r.o.rootDir, r.o.snapDir, r.fresh, r.o.table))
	if err != nil {
		fmt.Fprintln(r.o.stdout, err)
		return false
	}
	if res.Includes == 0 {
		fmt.Fprintf(r.o.stdout, "dsh-sim -check: %s: no --8<-- includes, nothing to check (is it the docs page?)\n", shown)
		return false
	}
	fmt.Fprintf(r.o.stdout, "dsh-sim -check: %s: %s resolved, %d checked against the fresh run\n",
		shown, plural(res.Includes, "include"), res.Fresh)
	return true
}

// renderPage writes the page with every include expanded to -o FILE or
// stdout. -o is written only, never a file the page is made of: -o naming
// one of the files the page includes is a usage error, found before
// anything is written (validateRender refuses the page itself).
func renderPage(o *options) error {
	src := PageSource(o.rootDir, o.snapDir, nil, o.table)
	var included []string
	read := src.Read
	src.Read = func(p string) ([]byte, error) {
		included = append(included, p)
		return read(p)
	}
	out, err := snippets.Render(o.render, o.pageText, src)
	if err != nil {
		fmt.Fprintln(o.stderr, err)
		fmt.Fprintf(o.stderr, "dsh-sim: -render %s: FAIL\n", o.render)
		return cmdline.Status(cmdline.ExitFailure)
	}
	if o.out == "" {
		_, err = o.stdout.Write(out)
		return err
	}
	for _, p := range included {
		if sameFile(o.out, pageFile(o.rootDir, o.snapDir, p)) {
			return cmdline.Usage("-o %s: is %s, which the page includes (write the expanded page elsewhere)", o.out, p)
		}
	}
	return os.WriteFile(o.out, out, 0o644)
}

// sameFile says whether the paths a and b both exist and are one file
// (through a symlink or a hard link too).
func sameFile(a, b string) bool {
	fa, err := os.Stat(a)
	if err != nil {
		return false
	}
	fb, err := os.Stat(b)
	return err == nil && os.SameFile(fa, fb)
}
