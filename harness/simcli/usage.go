package simcli

// Usage is the text dsh-sim -h prints.
const Usage = `usage: dsh-sim [-check] [-run PATTERN] [-o DIR] [-root DIR] [-page FILE] [-v]
       dsh-sim -list [-run PATTERN] [-root DIR]
       dsh-sim -render PAGE [-o FILE] [-root DIR]

dsh-sim runs the simulations ("sims") of package harness/sims' table. Each
sim drives the real stack (real Landlock and bwrap, real processes, real
files; only what the docs page names as constructed is constructed) and
produces effect files, which dsh-sim writes under snapshots/ in the
repository (e.g. snapshots/txt/profiles.txt). Paths, times and ids in them
are normalised (<ws>, <tmp>, <time>, <uuid-N>), so a run is deterministic on a
machine class.

The sims' temporary and scratch directories (dshsim-run-<sim>-*, in $TMPDIR
and under $DSHSIM_SCRATCH, else /var/tmp) are held by the run and removed at
its end; those of a killed run are removed by the next run (this user's
only, never one a live run holds), one line on stderr each.

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
              write PAGE, a text file (UTF-8, no NUL byte; anything else is
              refused), with every include expanded (plain Markdown, no
              mkdocs needed) to -o FILE, or stdout; -o is never the page
              or a file it includes.

Flags:
  -run PATTERN  only sims whose name matches the regular expression; a
                pattern that matches none is one line on stderr, exit 1
  -o DIR        snapshot directory to write or check (default: snapshots/ at
                the repository root); -check needs it to exist, writing makes
                it but not its parents; with -render, the output file, whose
                directory must exist; -list writes nothing and refuses it
  -root DIR     repository root (default: found from the current directory,
                the first parent whose go.mod declares github.com/dshsim/dshsim;
                -list needs none); a -root without that go.mod is refused in
                every mode, -list included, except with -render, where any
                directory does; sims read inputs (transcripts/) from it and
                page includes are relative to it, except snapshots/... which
                name files in -o
  -page FILE    docs page checked by -check (default docs/tools.md under the root)
  -v            log sim progress to stderr
  -h            this help

Include forms on the page (mkdocs pymdown snippets style; paths relative to
the repository root):
  --8<-- "snapshots/txt/profiles.txt"            whole file
  --8<-- "snapshots/txt/landlock-runs.txt:1:28"  lines 1-28, 1-based, inclusive
  --8<-- "sandbox/backends.go:backend-chain"     section between the comments
                                                 // --8<-- [start:backend-chain]
                                                 // --8<-- [end:backend-chain]

Updating goldens:
  make sim                    rewrite snapshots/ with dsh-sim, then dsh-sim -check
  DSHSIM_UPDATE=1 go test ./...
                              update every golden at once: effect files
                              (harness/sims tests), package goldens
                              (harness.Golden) and testscript scripts (scenarios/)

Exit status: 0 all well; 1 a sim failed, a file drifted, is missing, is
unclaimed or could not be written, the page is missing or an include is
broken or stale, or -run matches no sim (one line on stderr naming the
pattern, nothing run); 2 usage error (one line on stderr: a bad flag or
argument, a -root that is not the repository or cannot be read, a -o that
cannot be used (with -render: also the page or a file it includes), a
-render PAGE that is missing or not text, a $DSHSIM_SCRATCH that is not a
directory this user may write). Every path a flag names is checked
before any sim runs.
`
