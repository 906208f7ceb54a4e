package dynamic

import (
	"strings"
	"testing"
)

// TestLimits: each bound admits its value and refuses one more, naming
// it; a name is taken whatever its case.
func TestLimits(t *testing.T) {
	taken := []string{"bash", "read", "run_code"}
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"code at the bound", CheckCode(strings.Repeat("x", MaxCodeBytes)), ""},
		{"code past the bound", CheckCode(strings.Repeat("x", MaxCodeBytes+1)), "code.host: 1048577 bytes"},
		{"a package below the bound", CheckPackages(MaxPackages-1, true), ""},
		{"a package at the bound", CheckPackages(MaxPackages, true), "keeps 64 dynamic packages"},
		{"a kept package redefined at the bound", CheckPackages(MaxPackages, false), ""},
		{"tools of a package at the bound", CheckCounts(MaxToolsPerPackage, 0), ""},
		{"tools of a package past the bound", CheckCounts(MaxToolsPerPackage+1, 0), "registers 33 tools"},
		{"running tools at the bound", CheckCounts(1, MaxTools-1), ""},
		{"running tools past the bound", CheckCounts(1, MaxTools), "64 dynamic tools run already"},
		{"a free name", CheckName("snapshot_double", taken), ""},
		{"a name with a taken one as prefix", CheckName("bash2", taken), ""},
		{"a taken name", CheckName("bash", taken), `"bash" is taken`},
		{"a taken name in another case", CheckName("Read", taken), `"Read" differs only in case from "read"`},
		{"run_code upper", CheckName("RUN_CODE", taken), `differs only in case from "run_code"`},
		{"nothing taken", CheckName("bash", nil), ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			switch {
			case tc.want == "" && tc.err != nil:
				t.Fatalf("err = %v", tc.err)
			case tc.want != "" && (tc.err == nil || !strings.Contains(tc.err.Error(), tc.want)):
				t.Fatalf("err = %v, want one naming %q", tc.err, tc.want)
			}
		})
	}
}
