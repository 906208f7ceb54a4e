package cmdline

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// ExitFailure is the exit status of a command that ran and failed (a
// mismatch, a drift, nothing matched, a step that broke).
const ExitFailure = 1

// UsageError is a usage problem a command finds after parsing (a flag value
// or an argument that cannot be used): [Command.Exit] prints it as the one
// usage line and returns [ExitUsage].
type UsageError struct{ msg string }

func (e *UsageError) Error() string { return e.msg }

// Usage returns a [UsageError].
func Usage(format string, args ...any) error {
	return &UsageError{msg: fmt.Sprintf(format, args...)}
}

// Status is the error of a command that has already said why it fails (a
// report on stdout, a line on stderr): [Command.Exit] prints nothing more
// and returns the status.
type Status int

func (s Status) Error() string { return fmt.Sprintf("exit status %d", int(s)) }

// Main is the body of every command's Main: it parses args into the
// command's flags ([Command.Parse]: -h, or a usage error, ends it there)
// and returns [Command.Exit] of run, which gets the arguments left after
// the flags.
func (c Command) Main(args []string, stdout, stderr io.Writer, run func(args []string) error) int {
	if code, ok := c.Parse(args, stdout, stderr); !ok {
		return code
	}
	return c.Exit(stderr, run(c.Flags.Args()))
}

// Exit is the exit status of a command whose run returned err, after writing
// what err still has to say to stderr: 0 for nil; the one usage line and
// [ExitUsage] for a [UsageError]; the status alone for a [Status]; any other
// error as the one line "<name>: <err>" and [ExitFailure].
func (c Command) Exit(stderr io.Writer, err error) int {
	var usage *UsageError
	var status Status
	switch {
	case err == nil:
		return 0
	case errors.As(err, &usage):
		return c.Usagef(stderr, "%s", usage.msg)
	case errors.As(err, &status):
		return int(status)
	}
	fmt.Fprintf(stderr, "%s: %v\n", c.Name, err)
	return ExitFailure
}

// ErrNoSuchDir is [Command.CheckOutDir]'s error for a missing directory
// that must exist.
var ErrNoSuchDir = errors.New("no such directory")

// CheckOutDir says what is wrong with dir as an output directory a command
// writes into: an existing directory will do; a missing one the command
// makes (only its last component: a mistyped path must not grow a tree, so
// its parent must be a directory), unless mustExist. The error names no
// flag; the caller does.
func (c Command) CheckOutDir(dir string, mustExist bool) error {
	fi, err := os.Stat(dir)
	switch {
	case err == nil && !fi.IsDir():
		return errors.New("not a directory")
	case err == nil:
		return nil
	case !missing(err):
		return err
	case mustExist:
		return ErrNoSuchDir
	}
	return parentIsDir(dir, c.Name+" makes the directory, not its parents")
}

// CheckOutFile says what is wrong with path as an output file a command
// writes at its end, so that it can fail before it starts anything: the
// file's directory must exist (the command makes no directory for it) and
// path must not be a directory.
func (c Command) CheckOutFile(path string) error {
	fi, err := os.Stat(path)
	switch {
	case err == nil && fi.IsDir():
		return errors.New("is a directory")
	case err == nil:
		return nil
	case !missing(err):
		return err
	}
	return parentIsDir(path, c.Name+" makes no directory for it")
}

// ErrNoSuchFile is [CheckInFile]'s error for a missing file.
var ErrNoSuchFile = errors.New("no such file")

// CheckInFile says what is wrong with path as an input file a command reads,
// so that it can fail before it starts anything: it must be a regular file
// the command may open. A missing file is [ErrNoSuchFile]; any other reason
// is said without the path, which the caller names.
func CheckInFile(path string) error {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return ErrNoSuchFile
	}
	if err != nil {
		return Reason(err)
	}
	defer f.Close()
	fi, err := f.Stat()
	switch {
	case err != nil:
		return Reason(err)
	case fi.IsDir():
		return errors.New("is a directory")
	case !fi.Mode().IsRegular():
		return errors.New("not a regular file")
	}
	return nil
}

// Reason is err without the path an *fs.PathError repeats, for a message
// that names the path itself ("-o x: permission denied", not "-o x: open x:
// permission denied").
func Reason(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// missing says whether a stat error means the path does not exist (under a
// file too: ENOTDIR), so that the parent is what to name.
func missing(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)
}

// parentIsDir says what is wrong with path's parent as the place path is made in.
func parentIsDir(path, why string) error {
	parent := filepath.Dir(filepath.Clean(path))
	if fi, err := os.Stat(parent); err != nil || !fi.IsDir() {
		return fmt.Errorf("its parent %s is not a directory (%s)", parent, why)
	}
	return nil
}

// NoMatch is the error of a selection that matches nothing, the same for
// every command: not a usage error (the command line is well formed; like
// grep, a search that finds nothing fails), so [Command.Exit] prints the
// one line "<name>: no <what> matches <selection> (<known>)" on stderr and
// returns [ExitFailure], with nothing on stdout and nothing run. selection
// is what the user gave (-run "zzz"); known says what there was.
func NoMatch(what, selection, known string) error {
	return fmt.Errorf("no %s matches %s (%s)", what, selection, known)
}
