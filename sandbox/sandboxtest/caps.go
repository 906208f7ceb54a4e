package sandboxtest

import (
	"strings"
	"testing"

	"github.com/dshsim/dshsim/sandbox/internal/llsys"
	"github.com/dshsim/dshsim/sandbox/procfs"
)

// capSets are the capability lines of /proc/<pid>/status, in its order.
var capSets = []string{"CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"}

// CheckNoCapabilities fails t unless status (the /proc/self/status a confined
// command printed) shows a process that holds no capability at all and runs
// with no_new_privs: CapInh, CapPrm, CapEff and CapAmb all zero, and CapBnd
// zero too when this test process could empty it (it holds CAP_SETPCAP, as
// root does); without CAP_SETPCAP nobody can narrow the bounding set, and the
// command's must then be this process's own (never wider).
func CheckNoCapabilities(t testing.TB, status string) {
	t.Helper()
	got := procfs.ParseStatus(status)
	const zero = "0000000000000000"
	for _, k := range capSets {
		if _, ok := got[k]; !ok {
			t.Fatalf("status has no %s line:\n%s", k, status)
		}
	}
	for _, k := range []string{"CapInh", "CapPrm", "CapEff", "CapAmb"} {
		if got[k] != zero {
			t.Errorf("%s: %s inside the sandbox, want %s", k, got[k], zero)
		}
	}
	wantBnd := zero
	if setpcap, err := llsys.EffectiveCap(llsys.CapSetpcap); err != nil {
		t.Fatal(err)
	} else if !setpcap {
		own, err := procfs.Proc.Status("self")
		if err != nil {
			t.Fatal(err)
		}
		wantBnd = procfs.ParseStatus(own)["CapBnd"]
	}
	if got["CapBnd"] != wantBnd {
		t.Errorf("CapBnd: %s inside the sandbox, want %s", got["CapBnd"], wantBnd)
	}
	if got["NoNewPrivs"] != "1" {
		t.Errorf("NoNewPrivs: %q inside the sandbox, want 1", got["NoNewPrivs"])
	}
	if t.Failed() {
		var lines []string
		for _, k := range capSets {
			lines = append(lines, k+" "+got[k])
		}
		t.Logf("inside the sandbox: %s", strings.Join(lines, ", "))
	}
}
