package cmdline_test

import (
	"bytes"
	"context"
	"flag"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dshsim/dshsim/harness/cmdline"
)

func command() (cmdline.Command, *bool, *int) {
	fs := flag.NewFlagSet("", flag.ExitOnError) // Parse must turn ExitOnError off
	v := fs.Bool("v", false, "verbose")
	n := fs.Int("n", 1, "a number")
	c := cmdline.Command{Name: "demo", Flags: fs, Help: cmdline.HelpText("usage: demo [-v] [-n N] ARG...\n", fs)}
	return c, v, n
}

func TestParse(t *testing.T) {
	cases := []struct {
		name         string
		args         []string
		code         int
		ok           bool
		stdout, line string // line: the one stderr line ("" = no stderr)
		noArgs       bool   // Command.NoArgs
	}{
		{name: "flags and arguments", args: []string{"-v", "-n", "3", "a", "b"}, ok: true},
		{name: "-h prints the help to stdout and exits 0", args: []string{"-h"}, stdout: "usage: demo [-v] [-n N] ARG...\n  -n int\n    \ta number (default 1)\n  -v\tverbose\n"},
		{name: "-help too", args: []string{"-help"}, stdout: "usage: demo [-v] [-n N] ARG...\n  -n int\n    \ta number (default 1)\n  -v\tverbose\n"},
		{name: "an unknown flag is one line", args: []string{"-bogus"}, code: 2, line: "demo: flag provided but not defined: -bogus; run demo -h for usage"},
		{name: "a bad value is one line", args: []string{"-n", "x"}, code: 2, line: `demo: invalid value "x" for flag -n: parse error; run demo -h for usage`},
		{name: "a missing value is one line", args: []string{"-n"}, code: 2, line: "demo: flag needs an argument: -n; run demo -h for usage"},
		{name: "a flag after an argument is refused, not ignored", args: []string{"a", "-v"}, code: 2, line: `demo: flag -v after the arguments: flags go before the first argument ("a"); run demo -h for usage`},
		{name: "after -- a dash argument is an argument", args: []string{"--", "a", "-v"}, ok: true},
		{name: "a lone dash is an argument", args: []string{"a", "-"}, ok: true},
		{name: "NoArgs takes flags", args: []string{"-v", "-n", "3"}, ok: true, noArgs: true},
		{name: "NoArgs refuses an argument", args: []string{"-v", "a"}, code: 2, line: `demo: unexpected argument "a" (demo takes no arguments); run demo -h for usage`, noArgs: true},
		{name: "NoArgs refuses an argument after --", args: []string{"--", "-v"}, code: 2, line: `demo: unexpected argument "-v" (demo takes no arguments); run demo -h for usage`, noArgs: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, _, _ := command()
			c.NoArgs = tc.noArgs
			var out, errb bytes.Buffer
			code, ok := c.Parse(tc.args, &out, &errb)
			if code != tc.code || ok != tc.ok {
				t.Errorf("code %d ok %v, want %d %v", code, ok, tc.code, tc.ok)
			}
			if out.String() != tc.stdout {
				t.Errorf("stdout %q, want %q", out.String(), tc.stdout)
			}
			want := ""
			if tc.line != "" {
				want = tc.line + "\n"
			}
			if errb.String() != want {
				t.Errorf("stderr %q, want %q", errb.String(), want)
			}
		})
	}
}

func TestUsagefIsOneLine(t *testing.T) {
	var b bytes.Buffer
	code := cmdline.Usagef(&b, "demo", "bad %s:\n  %s", "root", "no go.mod")
	if code != cmdline.ExitUsage || b.String() != "demo: bad root: no go.mod; run demo -h for usage\n" {
		t.Fatalf("code %d, %q", code, b.String())
	}
	if strings.Count(b.String(), "\n") != 1 {
		t.Fatalf("%q is not one line", b.String())
	}
}

func TestWithInterrupt(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			ctx, in := cmdline.WithInterrupt(context.Background())
			defer in.Stop()
			if in.Signal() != nil || in.Status(0) != 0 {
				t.Fatalf("before a signal: %v, status %d", in.Signal(), in.Status(0))
			}
			if err := syscall.Kill(os.Getpid(), sig); err != nil {
				t.Fatal(err)
			}
			select {
			case <-ctx.Done():
			case <-time.After(10 * time.Second):
				t.Fatal("the context was not cancelled by the signal")
			}
			if in.Signal() != sig || in.Status(0) != 128+int(sig) {
				t.Fatalf("signal %v, status %d; want %v and %d", in.Signal(), in.Status(0), sig, 128+int(sig))
			}
		})
	}
}
