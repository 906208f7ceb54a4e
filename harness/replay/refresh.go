package replay

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/dshsim/dshsim/harness/replay/acpwire"
	"github.com/dshsim/dshsim/harness/replay/fixture"
	"github.com/dshsim/dshsim/harness/replay/projection"
	"github.com/dshsim/dshsim/harness/replay/recording"
)

// Refreshed is the outcome of refreshing one recording.
type Refreshed struct {
	// Result is the replay the refresh ran (its verdict against the
	// recording as it was).
	Result *Result
	// Changed lists the files rewritten (none when the stack's output is
	// what the recording holds).
	Changed []string
}

// Refresh replays the recording in dir with its own script and writes back
// what our stack produced, as upstream's refresh does: session.jsonl (our
// log stabilized against the committed one, see package fixture) and every
// child's session.<n>.jsonl likewise,
// stdout.expected.jsonl (the frames our bridge sent), and
// projection.expected.json when the recording has one. The model's chunks
// and the recording's inputs (input.json, workspace/, overrides, settings,
// the header sidecars) are kept. A replay that fails writes nothing.
func Refresh(ctx context.Context, dir string, opt Options) (*Refreshed, error) {
	opt.Refresh = true
	res, resp := replayIsolated(ctx, dir, opt)
	out := &Refreshed{Result: res}
	if res.Verdict == Failed {
		return out, errors.New(res.Error)
	}
	if resp == nil || resp.Run == nil {
		return out, fmt.Errorf("%s: the replay returned no log to refresh from", res.Name)
	}
	committed, err := os.ReadFile(filepath.Join(dir, recording.SessionFile))
	if err != nil {
		return out, err
	}
	rec, err := recording.Load(dir)
	if err != nil {
		return out, err
	}
	files, err := fixtureFiles(resp.Log, committed, resp.Run, rec.Settings.EventTimes)
	if err != nil {
		return out, fmt.Errorf("%s: %w", res.Name, err)
	}
	if len(rec.Events) == 0 {
		// a scenario without a model turn keeps its header-only log, as
		// upstream's fixture does (no log is compared for it)
		files[recording.SessionFile] = committed
	}
	names := []string{recording.SessionFile, recording.StdoutFile}
	for _, c := range resp.Run.Children {
		name := recording.ChildFile(c.Index)
		committed, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return out, err
		}
		// Our session's id in the child's log (its parent's, a relay's
		// sender) is the recorded session's.
		log := bytes.ReplaceAll(c.Log, []byte(resp.Run.SessionID), []byte(rec.Header.ID))
		ctx := fixture.Context{IDs: []string{c.SessionID}, Cwds: []string{resp.Run.Cwd}, EventTimes: rec.Settings.EventTimes}
		if files[name], err = fixture.Session(log, committed, ctx); err != nil {
			return out, fmt.Errorf("%s: %s: %w", res.Name, name, err)
		}
		names = append(names, name)
	}
	for _, f := range names {
		changed, err := writeIfChanged(filepath.Join(dir, f), files[f])
		if err != nil {
			return out, err
		}
		if changed {
			out.Changed = append(out.Changed, f)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, recording.ProjectionFile)); err == nil {
		changed, err := UpdateProjection(dir)
		out.Changed = append(out.Changed, changed...)
		if err != nil {
			return out, err
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return out, err
	}
	return out, nil
}

// fixtureFiles are the session.jsonl and stdout.expected.jsonl of our run
// (log, facts), stabilized against committed (nil: a new recording).
func fixtureFiles(log, committed []byte, run *runFacts, eventTimes bool) (map[string][]byte, error) {
	ctx := fixture.Context{IDs: []string{run.SessionID}, Cwds: []string{run.Cwd}, EventTimes: eventTimes}
	session, err := fixture.Session(log, committed, ctx)
	if err != nil {
		return nil, err
	}
	norm := projection.WithCwd(run.Cwd, run.SessionID)
	stdout, err := acpwire.Render(run.Frames, norm.String)
	if err != nil {
		return nil, err
	}
	return map[string][]byte{recording.SessionFile: session, recording.StdoutFile: stdout}, nil
}

// writeIfChanged replaces path with data (through a temporary file in the
// same directory, renamed over it) unless it already holds data.
func writeIfChanged(path string, data []byte) (bool, error) {
	old, err := os.ReadFile(path)
	if err == nil && bytes.Equal(old, data) {
		return false, nil
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return false, err
	}
	defer os.Remove(f.Name())
	if _, err := f.Write(data); err != nil {
		f.Close()
		return false, err
	}
	if err := f.Close(); err != nil {
		return false, err
	}
	if fi, err := os.Stat(path); err == nil {
		_ = os.Chmod(f.Name(), fi.Mode().Perm())
	} else {
		_ = os.Chmod(f.Name(), 0o644)
	}
	return true, os.Rename(f.Name(), path)
}
