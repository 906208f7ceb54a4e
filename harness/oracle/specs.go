package oracle

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Spec is a kept model script: gen/specs/<name>.json with its row of
// gen/settings.tsv (name, the run's switches in env form, what it exercises).
type Spec struct {
	Name     string
	Script   *Script
	Settings Settings
	Remark   string
}

// SettingsTable is the file of gen/ that lists every spec with its
// switches; SpecsDir holds the scripts.
const (
	SettingsTable = "settings.tsv"
	SpecsDir      = "specs"
)

// LoadSpecs reads every row of gen/settings.tsv in genDir and its script.
// A malformed row, an unknown switch, a duplicate name or a missing script
// is an error naming the file and line.
func LoadSpecs(genDir string) ([]Spec, error) {
	table := filepath.Join(genDir, SettingsTable)
	f, err := os.Open(table)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var specs []Spec
	seen := map[string]int{}
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		text := sc.Text()
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		cols := strings.Split(text, "\t")
		if len(cols) != 3 || cols[0] == "" {
			return nil, fmt.Errorf("%s:%d: want three tab-separated columns (name, env, remark), got %d", table, line, len(cols))
		}
		if prev, dup := seen[cols[0]]; dup {
			return nil, fmt.Errorf("%s:%d: %s is listed again (first at line %d)", table, line, cols[0], prev)
		}
		seen[cols[0]] = line
		set, err := ParseSettings(cols[1])
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", table, line, err)
		}
		s, err := LoadScript(filepath.Join(genDir, SpecsDir, cols[0]+".json"))
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", table, line, err)
		}
		specs = append(specs, Spec{Name: cols[0], Script: s, Settings: set, Remark: cols[2]})
	}
	return specs, sc.Err()
}

// Notes are the spec's NOTES.md facts: a script written by hand, or (its
// remark says "generated") one the differential generator made and shrank.
func (s Spec) Notes() Notes {
	origin := "written by hand as `harness/oracle/gen/specs/%s.json`"
	if strings.HasPrefix(s.Remark, "generated") {
		origin = "generated and shrunk by package harness/oracle/diff, kept as `harness/oracle/gen/specs/%s.json`"
	}
	return Notes{Name: s.Name, Origin: fmt.Sprintf(origin, s.Name), Remark: s.Remark, Settings: s.Settings}
}
