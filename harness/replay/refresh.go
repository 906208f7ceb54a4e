package replay

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"

	"github.com/dshsim/dshsim/harness/replay/acpwire"
	"github.com/dshsim/dshsim/harness/replay/fileset"
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
	// Recovered says what completing an earlier, interrupted write of the
	// recording did ("" when there was none: package fileset).
	Recovered string
}

// Refresh replays the recording in dir with its own script and writes back
// what our stack produced, as upstream's refresh does: session.jsonl (our
// log stabilized against the committed one, see package fixture) and every
// child's session.<n>.jsonl likewise,
// stdout.expected.jsonl (the frames our bridge sent), and the projection
// files when the recording has projection.expected.json. The model's chunks
// and the recording's inputs (input.json, workspace/, overrides, settings,
// the header sidecars) are kept.
//
// Only a complete run writes, and it writes every file at once (package
// fileset): a replay that fails, or one that ctx cancelled (checked after
// the run, and again once the new files are durable), writes nothing, and
// an interruption after that leaves the new set, completed by the next
// writer of the recording. An earlier write of the recording that was
// interrupted is completed first (Refreshed.Recovered).
func Refresh(ctx context.Context, dir string, opt Options) (*Refreshed, error) {
	opt.Refresh = true
	out := &Refreshed{}
	name := filepath.Base(filepath.Clean(dir))
	if fe, err := recording.DetectFrontend(dir, name); err == nil && fe != recording.ACP {
		return out, fmt.Errorf("%s: a %s recording: -refresh rewrites ACP recordings (session.jsonl, stdout.expected.jsonl, child logs) only; a front end's expected files are its suite's", name, fe)
	}
	var err error
	if out.Recovered, err = fileset.Recover(dir); err != nil {
		return out, err
	}
	res, resp := replayIsolated(ctx, dir, opt)
	out.Result = res
	if ctx.Err() != nil {
		return out, fmt.Errorf("%s: interrupted (%v): the run was not complete, nothing written", res.Name, context.Cause(ctx))
	}
	if res.Verdict == Failed {
		return out, errors.New(res.Error)
	}
	if resp == nil || resp.Run == nil {
		return out, fmt.Errorf("%s: the replay returned no log to refresh from", res.Name)
	}
	names, files, err := refreshedFiles(dir, res.Name, resp)
	if err != nil {
		return out, err
	}
	out.Changed, err = fileset.Replace(ctx, dir, names, files)
	return out, err
}

// refreshedFiles are the files a refresh of the recording in dir writes
// from the run resp, and their names in order.
func refreshedFiles(dir, name string, resp *response) ([]string, map[string][]byte, error) {
	committed, err := os.ReadFile(filepath.Join(dir, recording.SessionFile))
	if err != nil {
		return nil, nil, err
	}
	rec, err := recording.Load(dir)
	if err != nil {
		return nil, nil, err
	}
	files, err := fixtureFiles(resp.Log, committed, resp.Run, rec.Settings.EventTimes)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(rec.Events) == 0 {
		// a scenario without a model turn keeps its header-only log, as
		// upstream's fixture does (no log is compared for it)
		files[recording.SessionFile] = committed
	}
	names := []string{recording.SessionFile, recording.StdoutFile}
	for _, c := range resp.Run.Children {
		file := recording.ChildFile(c.Index)
		committed, err := os.ReadFile(filepath.Join(dir, file))
		if err != nil {
			return nil, nil, err
		}
		// Our session's id in the child's log (its parent's, a relay's
		// sender) is the recorded session's.
		log := bytes.ReplaceAll(c.Log, []byte(resp.Run.SessionID), []byte(rec.Header.ID))
		ctx := fixture.Context{IDs: []string{c.SessionID}, Cwds: []string{resp.Run.Cwd}, EventTimes: rec.Settings.EventTimes}
		if files[file], err = fixture.Session(log, committed, ctx); err != nil {
			return nil, nil, fmt.Errorf("%s: %s: %w", name, file, err)
		}
		names = append(names, file)
	}
	if _, err := os.Stat(filepath.Join(dir, recording.ProjectionFile)); err == nil {
		pnames, pfiles, err := refreshedProjections(rec, files)
		if err != nil {
			return nil, nil, err
		}
		names = append(names, pnames...)
		maps.Copy(files, pfiles)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, nil, err
	}
	return names, files, nil
}

// refreshedProjections are the projection files of rec once its logs are
// the refreshed ones in files (parsed as the recording will read them).
func refreshedProjections(rec *recording.Recording, files map[string][]byte) ([]string, map[string][]byte, error) {
	fresh := *rec
	var err error
	if fresh.Header, fresh.Events, err = recording.ParseSession(rec.Name, recording.SessionFile, files[recording.SessionFile]); err != nil {
		return nil, nil, err
	}
	fresh.Children = nil
	for _, c := range rec.Children {
		fc := *c
		if data, ok := files[c.File]; ok {
			if fc.Header, fc.Events, err = recording.ParseSession(rec.Name, c.File, data); err != nil {
				return nil, nil, err
			}
		}
		fresh.Children = append(fresh.Children, &fc)
	}
	return projectionFiles(&fresh)
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
