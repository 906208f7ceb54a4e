package landlock_test

import (
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/dshsim/dshsim/sandbox/landlock"
)

// format is the canonical command line of an invocation (flags before "--").
func format(inv landlock.Invocation) []string {
	switch {
	case inv.Probe:
		return []string{"--probe"}
	case inv.ABI:
		return []string{"--abi"}
	}
	var out []string
	if inv.ABICap != 0 {
		out = append(out, "--abi-cap", strconv.Itoa(inv.ABICap))
	}
	for _, p := range inv.RO {
		out = append(out, "--ro", p)
	}
	for _, p := range inv.RW {
		out = append(out, "--rw", p)
	}
	return append(append(out, "--"), inv.Argv...)
}

// FuzzParse checks the runner's argument parser: it never panics; an error
// is a *UsageError whose message is one line; --probe and --abi are accepted
// only alone; a command needs "--" and a non-empty argv after it, which is
// exactly the arguments after the first "--"; and parse → format → parse is
// the identity.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"--ro\x00/\x00--rw\x00/dev/null\x00--\x00bash\x00-c\x00echo hi",
		"--probe", "--abi", "--probe\x00--ro\x00/", "--abi-cap\x003\x00--ro\x00/\x00--\x00true",
		"--ro", "--\x00", "--x\x00--\x00true", "--rw\x00--\x00--\x00a", "--abi-cap\x00-1\x00--\x00true",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, joined string) {
		args := strings.Split(joined, "\x00")
		inv, err := landlock.Parse(args)
		if err != nil {
			var ue *landlock.UsageError
			if !errors.As(err, &ue) {
				t.Fatalf("Parse(%q): error %T %v is not a *UsageError", args, err, err)
			}
			// One line, apart from newlines echoed from an argument (upstream
			// prints the offending argument raw; the first line still
			// carries the fatal prefix).
			echoed := 0
			for _, a := range args {
				echoed += strings.Count(a, "\n")
			}
			if n := strings.Count(err.Error(), "\n"); n > echoed || strings.HasPrefix(err.Error(), "\n") {
				t.Fatalf("Parse(%q): error %q has %d line breaks beyond the echoed argument", args, err, n)
			}
			return
		}
		if inv.Probe && !slices.Equal(args, []string{"--probe"}) {
			t.Fatalf("Parse(%q) accepted --probe with other arguments", args)
		}
		if inv.ABI && !slices.Equal(args, []string{"--abi"}) {
			t.Fatalf("Parse(%q) accepted --abi with other arguments", args)
		}
		if !inv.Probe && !inv.ABI {
			i := slices.Index(args, "--")
			if len(inv.Argv) == 0 || i < 0 {
				t.Fatalf("Parse(%q) accepted a command line without `-- argv`", args)
			}
			if inv.ABICap < 0 {
				t.Fatalf("Parse(%q) accepted a negative ABI cap %d", args, inv.ABICap)
			}
		}
		again, err := landlock.Parse(format(inv))
		if err != nil {
			t.Fatalf("re-parse of %q: %v", format(inv), err)
		}
		if d := cmp.Diff(inv, again); d != "" {
			t.Fatalf("parse → format → parse differs for %q (-first +second):\n%s", args, d)
		}
	})
}
