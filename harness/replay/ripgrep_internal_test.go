package replay

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// DSHSIM_RIPGREP names the rg glob and grep run; a name that is not an
// executable file is an error naming the variable, never PATH's rg instead.
func TestResolveRipgrep(t *testing.T) {
	dir := t.TempDir()
	exe, plain := filepath.Join(dir, "rg"), filepath.Join(dir, "rg.txt")
	if err := os.WriteFile(exe, []byte("#!/bin/sh\necho 'ripgrep 99.0.0'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(plain, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		env, opt, want, err string
	}{
		{"", "", "", ""},
		{exe, "", exe, ""},
		{"", exe, exe, ""},
		{filepath.Join(dir, "missing"), "", "", RipgrepEnv + ` "` + filepath.Join(dir, "missing") + `"`},
		{plain, "", "", "not an executable file"},
		{dir, "", "", "not an executable file"},
		{"", plain, "", `Options.Ripgrep "` + plain + `": not an executable file`},
	} {
		t.Setenv(RipgrepEnv, tc.env)
		opt := Options{Ripgrep: tc.opt}
		err := resolveRipgrep(&opt)
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("env %q opt %q: %v", tc.env, tc.opt, err)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("env %q opt %q: error %v, want one containing %q", tc.env, tc.opt, err, tc.err)
		case tc.err == "" && opt.Ripgrep != tc.want:
			t.Errorf("env %q opt %q: rg %q, want %q", tc.env, tc.opt, opt.Ripgrep, tc.want)
		}
	}
	if n := ripgrepNote(exe); n != "glob and grep ran ripgrep 99.0.0 from "+exe+" ("+RipgrepEnv+")" {
		t.Errorf("note %q", n)
	}
}
