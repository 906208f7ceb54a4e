package kernels

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/dshsim/dshsim/harness/cmdline"
	"github.com/dshsim/dshsim/sandbox/sandboxtest"
	"golang.org/x/sys/unix"
)

// Usage is the text kernel-matrix -h prints before its flags.
const Usage = `usage: kernel-matrix [-layer1] [-golden FILE] [-update] [-cache DIR] [-baseline] [-keep]

kernel-matrix checks what the Landlock runner really enforces: layer 1 caps the
runner's ABI on this machine (1..7, then uncapped), layer 2 boots real Debian
kernels under qemu-system-x86_64 with the runner and the probes in an
initramfs. The rendered matrix is compared with snapshots/kernel-matrix.txt
(-golden), or written to it with -update or DSHSIM_UPDATE=1; every problem
Check finds (an unadmitted gap, a runner failure on a Landlock kernel, a guest
that did not finish) fails the run. It takes no arguments.

Its work directory (static binaries, initramfs, console captures) lives under
$DSHSIM_SCRATCH or /var/tmp and is removed at the end, also when SIGINT or
SIGTERM interrupts the run (-keep keeps it). Kernels are downloaded once into
the cache (see -cache); concurrent runs wait for each other's download.

Exit status: 0 the matrix matches and has no problem; 1 it differs, a problem
was found, or a step failed; 2 usage error (one line on stderr, before
anything is built, naming the flag or variable: a bad flag, an argument, a
$DSHSIM_SCRATCH that is not a directory this user may write, outside the
repository, a golden file missing or unreadable (or, with -update, one it
cannot write), a -cache this user may not write); 130 or 143 interrupted by
SIGINT or SIGTERM.

Flags:
`

// mainOptions are one kernel-matrix invocation: the flags as parsed
// ([matrixCommand]), then checked and resolved by validate.
type mainOptions struct {
	Options
	golden         string
	update         bool
	stdout, stderr io.Writer
	root           string // the repository, resolved by validate
}

// matrixCommand is kernel-matrix's flag set, parsing into o.
func matrixCommand(o *mainOptions) cmdline.Command {
	fs := flag.NewFlagSet("kernel-matrix", flag.ContinueOnError)
	fs.StringVar(&o.CacheDir, "cache", "", "download cache (default $XDG_CACHE_HOME/dshsim-kernels, else /var/cache/dshsim-kernels when writable, else ~/.cache/dshsim-kernels; a readable /var/cache/dshsim-kernels is used read-only)")
	fs.StringVar(&o.golden, "golden", "", "golden file (default <repo>/snapshots/kernel-matrix.txt; with -layer1 none: print the matrix)")
	fs.BoolVar(&o.update, "update", os.Getenv("DSHSIM_UPDATE") == "1", "write the golden file instead of comparing")
	fs.BoolVar(&o.Layer1Only, "layer1", false, "layer 1 only (no qemu); compares against -golden only if given")
	fs.BoolVar(&o.Baseline, "baseline", false, "also boot each kernel with an init that powers off at once, and report the ratio")
	fs.BoolVar(&o.Keep, "keep", false, "keep the work directory (console captures, initramfs)")
	return cmdline.Command{Name: "kernel-matrix", Flags: fs, Help: cmdline.HelpText(Usage, fs), NoArgs: true}
}

// Main is cmd/kernel-matrix: the flags are parsed into options, then
// runMatrix. Exit status as [Usage] says.
func Main(args []string, stdout, stderr io.Writer) int {
	o := &mainOptions{stdout: stdout, stderr: stderr}
	cmd := matrixCommand(o)
	return cmd.Main(args, stdout, stderr, func([]string) error { return runMatrix(cmd, o) })
}

// validate checks what the run needs before it builds anything: a usable
// scratch root ($DSHSIM_SCRATCH), the repository, a golden file to compare
// with (readable) or write (its directory), and for layer 2 a kernel cache
// it may write. Each problem is a usage error naming the variable or flag.
func (o *mainOptions) validate(cmd cmdline.Command) error {
	if _, err := sandboxtest.UsableScratchRoot(); err != nil {
		return cmdline.Usage("%v", err)
	}
	wd, _ := os.Getwd()
	root, err := RepoRoot(wd)
	if err != nil {
		return cmdline.Usage("%v (run it inside the repository)", err)
	}
	o.root = root
	flag := "-golden " + o.golden
	if o.golden == "" && !o.Layer1Only {
		o.golden = filepath.Join(root, "snapshots", "kernel-matrix.txt")
		flag = "the golden file " + o.golden + " (-golden's default)"
	}
	switch {
	case o.update && o.golden == "":
		return cmdline.Usage("-update with -layer1 needs -golden FILE")
	case o.update:
		if err := cmd.CheckOutFile(o.golden); err != nil {
			return cmdline.Usage("%s: %v", flag, err)
		}
	case o.golden != "":
		err := cmdline.CheckInFile(o.golden)
		if errors.Is(err, cmdline.ErrNoSuchFile) {
			err = errors.New("no such file (-update or DSHSIM_UPDATE=1 writes it)")
		}
		if err != nil {
			return cmdline.Usage("%s: %v", flag, err)
		}
	}
	if o.Layer1Only {
		return nil
	}
	flag = "-cache " + o.CacheDir
	if o.CacheDir == "" {
		o.CacheDir = DefaultCache()
		flag = "the kernel cache " + o.CacheDir + " (-cache's default)"
	}
	if err := checkCache(o.CacheDir); err != nil {
		return cmdline.Usage("%s: %v", flag, err)
	}
	return nil
}

// checkCache says what is wrong with dir as the kernel cache a run fills:
// it, or the nearest of its parents that exists (the run makes the rest),
// must be a directory this user may write.
func checkCache(dir string) error {
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		fi, err := os.Stat(d)
		switch {
		case (errors.Is(err, fs.ErrNotExist) || errors.Is(err, unix.ENOTDIR)) && filepath.Dir(d) != d:
			continue
		case err != nil:
			return cmdline.Reason(err)
		case !fi.IsDir():
			return fmt.Errorf("%s is not a directory", d)
		}
		if err := unix.Access(d, unix.W_OK|unix.X_OK); err != nil {
			return fmt.Errorf("%s is not writable (%v)", d, err)
		}
		return nil
	}
}

// runMatrix validates o, runs the matrix ([Run]), then compares it with
// (or, with -update, writes) the golden file, and fails on any problem
// Check finds.
func runMatrix(cmd cmdline.Command, o *mainOptions) error {
	if err := o.validate(cmd); err != nil {
		return err
	}
	logf := func(f string, a ...any) { fmt.Fprintf(o.stderr, f+"\n", a...) }
	o.Logf = logf
	ctx, in := cmdline.WithInterrupt(context.Background())
	defer in.Stop()
	res, err := Run(ctx, o.root, o.Options)
	if s := in.Signal(); s != nil {
		logf("kernel-matrix: interrupted (%v); stopped, work directory removed", s)
		return cmdline.Status(in.Status(cmdline.ExitFailure))
	}
	if err != nil {
		return err
	}
	failed := false
	switch {
	case o.golden == "":
		if _, err := o.stdout.Write(res.Text); err != nil {
			return fmt.Errorf("writing the matrix: %w", err)
		}
	case o.update:
		if err := os.WriteFile(o.golden, res.Text, 0o644); err != nil {
			return err
		}
		logf("kernel-matrix: wrote %s", o.golden)
	default:
		if err := CompareGolden(o.golden, res.Text); err != nil {
			logf("kernel-matrix: %v", err)
			failed = true
		}
	}
	for _, p := range res.Problems {
		logf("kernel-matrix: PROBLEM: %s", p)
		failed = true
	}
	if failed {
		return cmdline.Status(cmdline.ExitFailure)
	}
	return nil
}
