package harness

import (
	"strings"
	"testing"
)

// TestCheckSims: a table that is not sorted, lists a name twice, has a sim
// without Run or files, or gives one file to two sims is refused, naming
// the sims; a good table passes.
func TestCheckSims(t *testing.T) {
	run := func(*Env) (map[string][]byte, error) { return nil, nil }
	a := Sim{Name: "a", Files: []string{"txt/a.txt"}, Run: run}
	b := Sim{Name: "b", Files: []string{"txt/b.txt"}, Run: run}
	if err := CheckSims([]Sim{a, b}); err != nil {
		t.Fatalf("a good table: %v", err)
	}
	noRun, noFiles, bClaimsA := b, b, b
	noRun.Run, noFiles.Files, bClaimsA.Files = nil, nil, []string{"txt/b.txt", "txt/a.txt"}
	cases := []struct {
		name  string
		table []Sim
		want  string
	}{
		{"unsorted", []Sim{b, a}, `sims "b" and "a" are not sorted by name`},
		{"a name twice", []Sim{a, a}, `sims "a" and "a" are not sorted by name, or one name is listed twice`},
		{"no Run", []Sim{a, noRun}, `sim "b" has no Run or no files`},
		{"no files", []Sim{a, noFiles}, `sim "b" has no Run or no files`},
		{"a file of two sims", []Sim{a, bClaimsA}, `file txt/a.txt claimed by sims "a" and "b"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckSims(tc.table)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want an error containing %q", err, tc.want)
			}
		})
	}
}
