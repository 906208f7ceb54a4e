package replay

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/dshsim/dshsim/harness/replay/fileset"
	"github.com/dshsim/dshsim/harness/replay/projection"
	"github.com/dshsim/dshsim/harness/replay/recording"
)

// ExpectedProjection renders the recording's normalised projection as the
// indented JSON stored in projection.expected.json.
func ExpectedProjection(rec *recording.Recording) ([]byte, error) {
	items, _, err := projectLog(rec, rec.Events, normalizer(rec, rec.Header.Cwd, rec.Header.ID))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(rec.Name, recording.SessionFile), err)
	}
	return marshalItems(items)
}

func marshalItems(items []projection.Item) ([]byte, error) {
	if items == nil {
		items = []projection.Item{}
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(items); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// ExpectedChildProjection renders child c's normalised projection, stored
// in projection.<n>.expected.json.
func ExpectedChildProjection(rec *recording.Recording, c *recording.Child) ([]byte, error) {
	items, err := projection.Project(c.Events, normalizer(rec, c.Header.Cwd, c.Header.ID))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(rec.Name, c.File), err)
	}
	return marshalItems(items)
}

// UpdateProjection rewrites <dir>/projection.expected.json from the
// recording's session.jsonl, and projection.<n>.expected.json from each
// child log, all at once (package fileset: an interruption leaves every old
// file or every new one). It returns the names of the files it changed.
func UpdateProjection(dir string) ([]string, error) {
	if _, err := fileset.Recover(dir); err != nil {
		return nil, err
	}
	rec, err := recording.Load(dir)
	if err != nil {
		return nil, err
	}
	names, files, err := projectionFiles(rec)
	if err != nil {
		return nil, err
	}
	return fileset.Replace(context.Background(), dir, names, files)
}

// projectionFiles are the projection files of rec: projection.expected.json
// and each child's projection.<n>.expected.json, named in that order.
func projectionFiles(rec *recording.Recording) ([]string, map[string][]byte, error) {
	data, err := ExpectedProjection(rec)
	if err != nil {
		return nil, nil, err
	}
	files := map[string][]byte{recording.ProjectionFile: data}
	names := []string{recording.ProjectionFile}
	for _, c := range rec.ComparedChildren() {
		if data, err = ExpectedChildProjection(rec, c); err != nil {
			return nil, nil, err
		}
		name := recording.ChildSidecar(recording.ProjectionFile, c.Index)
		files[name], names = data, append(names, name)
	}
	return names, files, nil
}

// checkProjectionFile compares projection.expected.json (when present) with
// the projection of session.jsonl; a difference is returned as a flag.
func checkProjectionFile(rec *recording.Recording, expected []projection.Item) (string, error) {
	return checkProjection(rec, recording.ProjectionFile, recording.SessionFile, expected)
}

// checkProjection compares the projection file (when present) with the
// projection of the log named log.
func checkProjection(rec *recording.Recording, file, log string, expected []projection.Item) (string, error) {
	data, err := rec.ReadFile(file)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	var items []projection.Item
	if err := json.Unmarshal(data, &items); err != nil {
		return "", &recording.Error{Recording: rec.Name, File: file, Line: 1, Problem: "invalid JSON: " + err.Error()}
	}
	c := projection.Compare(items, expected)
	if p := c.First(); p != nil {
		msg := fmt.Sprintf("%s is stale against %s at turn %d, %s", file, log, p.Turn, p.Label())
		if len(p.Diffs) > 0 {
			msg += ": " + p.Diffs[0].String()
		}
		return msg + " (regenerate with dsh-replay -update)", nil
	}
	return "", nil
}

// normalizer is the projection normalizer for one side of rec's comparison:
// the session's cwd and id, and the recording's time setting; a Python
// SDK recording's id tokens ([recording.Recording.IDTokens]) are session
// ids too.
func normalizer(rec *recording.Recording, cwd, id string) projection.Normalizer {
	n := projection.WithCwd(cwd, append([]string{id}, rec.IDTokens()...)...)
	n.EventTimes = rec.Settings.EventTimes
	return n
}
