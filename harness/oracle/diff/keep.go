package diff

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/dshsim/dshsim/harness/oracle"
	"github.com/dshsim/dshsim/harness/replay/recording"
)

// Where kept cases go, relative to the repository.
const (
	RecordingsDir = "testdata/replay/oracle"
	GenDir        = "harness/oracle/gen"
)

// Remark is a kept case's line in gen/settings.tsv: where it comes from
// and how it first differed.
func (f *Finding) Remark() string {
	return fmt.Sprintf("generated: case %d of seed %d (%s profile), shrunk by delta debugging from %d to %d calls; first difference: %s",
		f.Case.Index, f.Case.Seed, f.Case.Profile, f.Case.Script.Calls(), f.Minimal.Calls(), remarkDetail(f.MinimalChecked.Ours.Detail()))
}

// remarkDetail is the first line of a replay's detail on one line, without
// the "first difference: " the remark already says.
func remarkDetail(detail string) string {
	return strings.TrimPrefix(strings.Join(strings.Fields(firstLine(detail)), " "), "first difference: ")
}

// KeepIn returns a Campaign.Keep that writes each minimal case into the
// repository at root: the recording upstream made under
// testdata/replay/oracle/<name> with its NOTES.md, the script as
// harness/oracle/gen/specs/<name>.json and its row in gen/settings.tsv (so
// that the recording can be made again). An existing case of that name is
// refused.
func KeepIn(root string) func(f *Finding) error {
	return func(f *Finding) error {
		if f.Minimal == nil {
			return nil
		}
		name := f.Case.Name
		dir := filepath.Join(root, RecordingsDir, name)
		if _, err := os.Stat(dir); err == nil {
			return fmt.Errorf("%s exists: a case of that name is kept already", dir)
		}
		spec := oracle.Spec{Name: name, Script: f.Minimal, Settings: f.Case.Settings, Remark: f.Remark()}
		rec := f.MinimalChecked.Recorded
		var in recording.Input
		if err := json.Unmarshal(rec.Files[recording.InputFile], &in); err != nil {
			return err
		}
		files := map[string][]byte{oracle.NotesFile: spec.Notes().Markdown(in)}
		for p, b := range rec.Files {
			files[p] = b
		}
		if err := (&oracle.Recorded{Files: files}).Write(dir); err != nil {
			return err
		}
		gen := filepath.Join(root, GenDir)
		if err := os.WriteFile(filepath.Join(gen, oracle.SpecsDir, name+".json"), f.Minimal.JSON(), 0o644); err != nil {
			return err
		}
		table, err := os.OpenFile(filepath.Join(gen, oracle.SettingsTable), os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(table, "%s\t%s\t%s\n", name, f.Case.Settings, spec.Remark)
		if cerr := table.Close(); err == nil {
			err = cerr
		}
		return err
	}
}

// DumpIn returns a Campaign.Dump that writes a case into dir/<name>: the
// script (script.json, settings.txt), upstream's recording (recording/),
// upstream's check of it (upstream/: run.mjs's files) and our replay's
// first difference (ours.txt).
func DumpIn(dir string) func(k *Case, res *Checked) error {
	return func(k *Case, res *Checked) error {
		d := filepath.Join(dir, k.Name)
		files := map[string][]byte{
			"script.json":  k.Script.JSON(),
			"settings.txt": []byte(k.Settings.String() + "\n"),
			"outcome.txt":  []byte(res.Outcome + " " + res.Signature + "\n" + res.Detail + "\n"),
		}
		for p, b := range res.Recorded.Files {
			files["recording/"+p] = b
		}
		for p, b := range res.Recorded.Check.Files {
			files["upstream/"+p] = b
		}
		return (&oracle.Recorded{Files: files}).Write(d)
	}
}
