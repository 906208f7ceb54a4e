package diff

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/dshsim/dshsim/harness/oracle"
	"github.com/dshsim/dshsim/harness/replay/recording"
	"github.com/dshsim/dshsim/sandbox"
)

// Where kept cases go, relative to the repository: an ACP case's
// recording under RecordingsDir, a headless case's (the headless
// profile's) under HeadlessRecordingsDir, the scripts of both under
// GenDir.
const (
	RecordingsDir         = "testdata/replay/oracle"
	HeadlessRecordingsDir = "testdata/replay/headless-oracle"
	GenDir                = "harness/oracle/gen"
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
// that the recording can be made again); a headless case's recording goes
// under testdata/replay/headless-oracle/<name> and its row in
// gen/headless.tsv. An existing case of that name is refused, as is a
// recording that holds the value of a secret of the environment
// ([secretIn]).
func KeepIn(root string) func(f *Finding) error {
	return func(f *Finding) error {
		if f.Minimal == nil {
			return nil
		}
		name := f.Case.Name
		headless := f.Case.Profile == HeadlessProfile
		dir, table := filepath.Join(root, RecordingsDir, name), oracle.SettingsTable
		if headless {
			dir, table = filepath.Join(root, HeadlessRecordingsDir, name), oracle.HeadlessTable
		}
		if _, err := os.Stat(dir); err == nil {
			return fmt.Errorf("%s exists: a case of that name is kept already", dir)
		}
		rec := f.MinimalChecked.Recorded
		if v := secretIn(rec.Files, os.Environ()); v != "" {
			return fmt.Errorf("%s: not kept: the recording holds the value of the environment's %s", name, v)
		}
		spec := oracle.Spec{Name: name, Script: f.Minimal, Settings: f.Case.Settings, Remark: f.Remark(), Headless: headless}
		notes, err := keptNotes(spec, rec)
		if err != nil {
			return err
		}
		files := map[string][]byte{oracle.NotesFile: notes}
		for p, b := range rec.Files {
			files[p] = b
		}
		if err := (&oracle.Recorded{Files: files}).Write(dir); err != nil {
			return err
		}
		return keepSpec(filepath.Join(root, GenDir), table, spec)
	}
}

// keptNotes is a kept case's NOTES.md.
func keptNotes(spec oracle.Spec, rec *oracle.Recorded) ([]byte, error) {
	if spec.Headless {
		return spec.Notes().HeadlessMarkdown(), nil
	}
	var in recording.Input
	if err := json.Unmarshal(rec.Files[recording.InputFile], &in); err != nil {
		return nil, err
	}
	return spec.Notes().Markdown(in), nil
}

// keepSpec writes spec's script into gen/specs and appends its row to
// gen's table (made, with its header, when missing).
func keepSpec(gen, table string, spec oracle.Spec) error {
	if err := os.WriteFile(filepath.Join(gen, oracle.SpecsDir, spec.Name+".json"), spec.Script.JSON(), 0o644); err != nil {
		return err
	}
	path := filepath.Join(gen, table)
	_, err := os.Stat(path)
	fresh := errors.Is(err, fs.ErrNotExist)
	t, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	if fresh {
		_, err = fmt.Fprintf(t, "# name\tenv for the upstream run (DSH_PERMISSION_MODE; the headless profile composes the rest)\tremarks\n")
	}
	if err == nil {
		_, err = fmt.Fprintf(t, "%s\t%s\t%s\n", spec.Name, spec.Settings, spec.Remark)
	}
	if cerr := t.Close(); err == nil {
		err = cerr
	}
	return err
}

// secretIn names the first variable of env (NAME=value entries) that
// counts as a secret ([sandbox.SecretName]) and whose value, eight bytes
// or more, one of files holds ("" when none does): such a recording never
// goes into the tree.
func secretIn(files map[string][]byte, env []string) string {
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		if len(v) < 8 || !sandbox.SecretName(k) {
			continue
		}
		for _, b := range files {
			if bytes.Contains(b, []byte(v)) {
				return k
			}
		}
	}
	return ""
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
