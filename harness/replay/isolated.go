package replay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/dshsim/dshsim/harness/replay/isolate"
	"github.com/dshsim/dshsim/harness/replay/projection"
	"github.com/dshsim/dshsim/sandbox"
)

// isolatedName is the name the replay child is registered under.
const isolatedName = "dsh-replay"

// Serve is called from init because Go leaves no other way: the child is
// this same executable re-executed (/proc/self/exe), and that executable is
// dsh-replay or any test binary that links this package, whose main the go
// tool generates; only an init function runs in every one of them before
// main, so the child becomes the replay before that main (a test run, a flag
// parse) starts.
// The recording child (dsh-record) is served the same way.
func init() {
	isolate.Serve(isolatedName, serveIsolated)
	isolate.Serve(recordName, serveRecord)
}

// request and response cross into and out of the isolated child.
type request struct {
	Dir     string
	Options Options
}

type response struct {
	Result   *Result
	Expected []projection.Item
	Got      []projection.Item
	Log      []byte
	Run      *runFacts
}

// CheckIsolation reports whether replays can be contained here; the error
// is the one reason none can run unless the recordings are trusted (see
// package isolate).
func CheckIsolation() error {
	if err := isolate.Available(); err != nil {
		return fmt.Errorf("%w; a recording runs its own hooks and commands, which uncontained would write the host and share upstream's fixed paths (/tmp/dsh-acp-snap-<hash>) with every other run, so none is replayed (-trusted replays recordings you trust uncontained)", err)
	}
	return nil
}

// Replay replays the recording in dir through the real stack and compares
// it. The replay runs in a contained child process (package isolate: a root
// of its own, a private bounded /tmp, no network, no privilege, bounded);
// Replay itself writes nothing but the kept log (Options.LogDir). Where no
// contained child can be made, it fails, unless Options.Trusted: then it
// replays here, on the host.
func Replay(ctx context.Context, dir string, opt Options) *Result {
	res, _ := replayIsolated(ctx, dir, opt)
	return res
}

// replayIsolated is Replay, also returning our log and the run's facts
// (nil when the replay failed).
func replayIsolated(ctx context.Context, dir string, opt Options) (*Result, *response) {
	start := time.Now()
	res := &Result{Name: filepath.Base(filepath.Clean(dir)), Dir: dir}
	defer func() { res.Duration = time.Since(start) }()
	fail := func(err error) *Result {
		res.Verdict, res.Error = Failed, err.Error()
		return res
	}
	if err := CheckIsolation(); err != nil {
		if !opt.Trusted {
			return fail(err), nil
		}
		return replayTrusted(ctx, dir, opt, start)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return fail(err), nil
	}
	if opt.LauncherPath != "" {
		if opt.LauncherPath, err = filepath.Abs(opt.LauncherPath); err != nil {
			return fail(err), nil
		}
	}
	req, err := json.Marshal(request{Dir: abs, Options: opt})
	if err != nil {
		return fail(err), nil
	}
	share := []string{abs}
	if opt.LauncherPath != "" {
		share = append(share, opt.LauncherPath)
	} else if def := sandbox.DefaultLauncherPath(); fileExists(def) {
		// The child's default is landlock-run beside this executable: found
		// here, before the child's private /tmp hides it when the binaries
		// were built into a directory under /tmp.
		share = append(share, def)
	}
	var seen isolate.Containment
	out, err := isolate.Run(ctx, isolatedName, req, isolate.Options{Stderr: opt.Stderr, Share: share, TmpSize: opt.TmpSize, Bounds: opt.Bounds, Seen: &seen})
	contained := ""
	if seen.Root != nil {
		contained = seen.String()
	}
	if err != nil {
		res.Contained = contained
		return fail(fmt.Errorf("isolated replay: %w", err)), nil
	}
	var resp response
	if err := json.Unmarshal(out, &resp); err != nil || resp.Result == nil {
		return fail(fmt.Errorf("isolated replay: undecodable response (%v)", err)), nil
	}
	*res = *resp.Result
	res.Dir, res.Expected, res.Got, res.Contained = dir, resp.Expected, resp.Got, contained
	if err := keepLog(opt, res, resp.Log); err != nil {
		return fail(err), nil
	}
	return res, &resp
}

// keepLog writes our log to Options.LogDir when asked.
func keepLog(opt Options, res *Result, log []byte) error {
	if opt.LogDir == "" || log == nil {
		return nil
	}
	// The directory, never its parents (a mistyped path must not grow a
	// tree); replays running at once may make it together.
	if err := os.Mkdir(opt.LogDir, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	res.LogPath = filepath.Join(opt.LogDir, res.Name+".session.jsonl")
	return os.WriteFile(res.LogPath, log, 0o644)
}

// TrustedNote is the note of a replay that ran uncontained.
const TrustedNote = "replayed uncontained (-trusted): its hooks and commands ran on the host, with the host's /tmp and network"

// replayTrusted replays the recording in dir in this process, on the host:
// what its hooks and commands do happens here. The spill root, a fixed path
// in the host's /tmp, is removed afterwards unless it was there before.
func replayTrusted(ctx context.Context, dir string, opt Options, start time.Time) (*Result, *response) {
	spillRoot := SpillRoot(filepath.Base(filepath.Clean(dir)))
	var leave []string
	for _, p := range []string{spillRoot, spillRoot + ".lock"} {
		if _, err := os.Lstat(p); errors.Is(err, fs.ErrNotExist) {
			leave = append(leave, p)
		}
	}
	res, log := replayHere(ctx, dir, opt)
	for _, p := range leave {
		os.RemoveAll(p)
	}
	res.Notes = append(res.Notes, TrustedNote)
	res.Duration = time.Since(start)
	if err := keepLog(opt, res, log); err != nil {
		res.Verdict, res.Error = Failed, err.Error()
		return res, nil
	}
	if res.Verdict == Failed {
		return res, nil
	}
	return res, &response{Result: res, Expected: res.Expected, Got: res.Got, Log: log, Run: res.run}
}

// fileExists reports whether path names an existing file (not a directory).
func fileExists(path string) bool {
	st, err := os.Stat(path)
	return err == nil && !st.IsDir()
}

func serveIsolated(ctx context.Context, data []byte) ([]byte, error) {
	var req request
	if err := json.Unmarshal(data, &req); err != nil {
		return nil, fmt.Errorf("replay request: %w", err)
	}
	res, log := replayHere(ctx, req.Dir, req.Options)
	return json.Marshal(response{Result: res, Expected: res.Expected, Got: res.Got, Log: log, Run: res.run})
}
