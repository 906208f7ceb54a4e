package cmdline_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshsim/dshsim/harness/cmdline"
)

// TestExit: run's error decides the status and what stderr still gets.
func TestExit(t *testing.T) {
	c, _, _ := command()
	cases := []struct {
		name   string
		err    error
		code   int
		stderr string
	}{
		{"nil is success, silent", nil, 0, ""},
		{"a usage error is the usage line", cmdline.Usage("-o %s: not a directory", "x"), 2, "demo: -o x: not a directory; run demo -h for usage\n"},
		{"a wrapped usage error too", fmt.Errorf("wrapped: %w", cmdline.Usage("bad")), 2, "demo: bad; run demo -h for usage\n"},
		{"a status is silent", cmdline.Status(130), 130, ""},
		{"nothing matched is one line, exit 1", cmdline.NoMatch("sim", `-run "zzz"`, "sims: a, b"), 1, "demo: no sim matches -run \"zzz\" (sims: a, b)\n"},
		{"any other error is one line, exit 1", errors.New("boom"), 1, "demo: boom\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			if code := c.Exit(&b, tc.err); code != tc.code || b.String() != tc.stderr {
				t.Errorf("code %d, stderr %q; want %d, %q", code, b.String(), tc.code, tc.stderr)
			}
		})
	}
}

// TestCheckOutPaths: an output directory may be missing only when its
// parent exists (the command makes the last component only), or must exist;
// an output file needs its directory and must not be a directory.
func TestCheckOutPaths(t *testing.T) {
	c, _, _ := command()
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing")
	deep := filepath.Join(missing, "deeper")
	noParent := "its parent " + missing + " is not a directory"
	cases := []struct {
		name string
		err  error
		want string // "" = no error; else a prefix of the error
	}{
		{"dir: existing", c.CheckOutDir(dir, false), ""},
		{"dir: missing, parent exists", c.CheckOutDir(missing, false), ""},
		{"dir: missing, must exist", c.CheckOutDir(missing, true), "no such directory"},
		{"dir: parent missing", c.CheckOutDir(deep, false), noParent + " (demo makes the directory, not its parents)"},
		{"dir: a file", c.CheckOutDir(file, false), "not a directory"},
		{"dir: under a file", c.CheckOutDir(filepath.Join(file, "x"), false), "its parent " + file + " is not a directory"},
		{"file: existing", c.CheckOutFile(file), ""},
		{"file: new in an existing directory", c.CheckOutFile(missing), ""},
		{"file: directory missing", c.CheckOutFile(deep), noParent + " (demo makes no directory for it)"},
		{"file: a directory", c.CheckOutFile(dir), "is a directory"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			switch {
			case tc.want == "" && tc.err != nil:
				t.Errorf("unexpected error %v", tc.err)
			case tc.want != "" && (tc.err == nil || !strings.HasPrefix(tc.err.Error(), tc.want)):
				t.Errorf("error %v, want one starting %q", tc.err, tc.want)
			}
		})
	}
	if !errors.Is(c.CheckOutDir(missing, true), cmdline.ErrNoSuchDir) {
		t.Error("a missing directory that must exist is not ErrNoSuchDir")
	}
	if _, err := os.Stat(missing); err == nil {
		t.Errorf("a check made %s", missing)
	}
}

// TestCommandMain: Command.Main runs run only when the command line parses, with
// the arguments left after the flags, and maps its error with Exit.
func TestCommandMain(t *testing.T) {
	cases := []struct {
		name   string
		args   []string
		err    error
		ran    string // the arguments run got, "-" if it did not run
		code   int
		stderr string
	}{
		{"-h does not run", []string{"-h"}, nil, "-", 0, ""},
		{"a bad flag does not run", []string{"-bogus"}, nil, "-", 2, "demo: flag provided but not defined: -bogus; run demo -h for usage\n"},
		{"run gets the arguments", []string{"-v", "a", "b"}, nil, "a b", 0, ""},
		{"run's error is mapped", []string{"a"}, cmdline.Usage("a: no such thing"), "a", 2, "demo: a: no such thing; run demo -h for usage\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, _, _ := command()
			var out, errb bytes.Buffer
			ran := "-"
			code := c.Main(tc.args, &out, &errb, func(args []string) error {
				ran = strings.Join(args, " ")
				return tc.err
			})
			if code != tc.code || ran != tc.ran || errb.String() != tc.stderr {
				t.Errorf("code %d, ran %q, stderr %q; want %d, %q, %q", code, ran, errb.String(), tc.code, tc.ran, tc.stderr)
			}
		})
	}
}

// TestCheckInFile: an input file must be a regular file the command can
// open; the error says why without repeating the path.
func TestCheckInFile(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, path, want string
	}{
		{"a file", file, ""},
		{"missing", filepath.Join(dir, "missing"), "no such file"},
		{"under a file", filepath.Join(file, "x"), "not a directory"},
		{"a directory", dir, "is a directory"},
		{"a device", os.DevNull, "not a regular file"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := cmdline.CheckInFile(tc.path)
			if (err == nil) != (tc.want == "") || err != nil && err.Error() != tc.want {
				t.Errorf("CheckInFile(%s) = %v, want %q", tc.path, err, tc.want)
			}
		})
	}
	if !errors.Is(cmdline.CheckInFile(filepath.Join(dir, "missing")), cmdline.ErrNoSuchFile) {
		t.Error("a missing file is not ErrNoSuchFile")
	}
	if os.Geteuid() != 0 {
		if err := os.Chmod(file, 0); err != nil {
			t.Fatal(err)
		}
		if err := cmdline.CheckInFile(file); err == nil || err.Error() != "permission denied" {
			t.Errorf("an unreadable file: %v, want permission denied", err)
		}
	}
}
