package oracle

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Spec is a kept model script: gen/specs/<name>.json with its row of
// gen/settings.tsv (name, the run's switches in env form, what it
// exercises), or of gen/headless.tsv for a script upstream's headless
// front end runs ([Oracle.RecordHeadless]).
type Spec struct {
	Name     string
	Script   *Script
	Settings Settings
	Remark   string
	// Headless says the spec is a row of gen/headless.tsv.
	Headless bool
}

// SettingsTable is the file of gen/ that lists every spec the ACP agent
// runs with its switches, HeadlessTable every spec the headless front
// end runs (its switches the permission mode alone); SpecsDir holds the
// scripts of both.
const (
	SettingsTable = "settings.tsv"
	HeadlessTable = "headless.tsv"
	SpecsDir      = "specs"
)

// LoadSpecs reads every row of gen/settings.tsv in genDir and its script.
// A malformed row, an unknown switch, a duplicate name or a missing script
// is an error naming the file and line.
func LoadSpecs(genDir string) ([]Spec, error) { return loadTable(genDir, SettingsTable) }

// LoadHeadlessSpecs reads every row of gen/headless.tsv in genDir (none
// when the table is missing) and its script, as [LoadSpecs] does; a row
// whose switches are more than the permission mode, or whose script does
// not fit the unattended path ([HeadlessScriptError]), is an error naming
// the file and line.
func LoadHeadlessSpecs(genDir string) ([]Spec, error) {
	specs, err := loadTable(genDir, HeadlessTable)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return specs, err
}

// loadTable reads the rows of genDir's table and their scripts.
func loadTable(genDir, name string) ([]Spec, error) {
	table := filepath.Join(genDir, name)
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
		spec := Spec{Name: cols[0], Script: s, Settings: set, Remark: cols[2], Headless: name == HeadlessTable}
		if err := spec.headlessError(); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", table, line, err)
		}
		specs = append(specs, spec)
	}
	return specs, sc.Err()
}

// headlessError says why a headless spec cannot run through the headless
// front end (nil for one that can, and for an ACP spec).
func (s Spec) headlessError() error {
	if !s.Headless {
		return nil
	}
	rest := s.Settings
	rest.Mode, rest.Reminder = "", false // the profile mounts the reminder itself
	if rest != (Settings{}) {
		return fmt.Errorf("a headless spec's switches are the permission mode alone, not %s", s.Settings)
	}
	return HeadlessScriptError(s.Script)
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
