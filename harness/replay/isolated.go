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

	"github.com/dshsim/dshsim/harness/replay/fileset"
	"github.com/dshsim/dshsim/harness/replay/isolate"
	"github.com/dshsim/dshsim/harness/replay/projection"
	"github.com/dshsim/dshsim/harness/replay/recording"
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

// request and response cross into and out of the isolated child. The
// host decodes a response strictly and checks it against its own reading
// of the recording (judge.go) before it believes any of it.
type request struct {
	Dir     string
	Options Options
}

type response struct {
	Result   *Result
	Expected []projection.Item
	Got      []projection.Item
	// Children are the sides of Result.Children, in their order (a
	// ChildResult carries none in JSON).
	Children []childSides
	Log      []byte
	Run      *runFacts
}

// childSides are one child session's projections.
type childSides struct {
	Expected []projection.Item
	Got      []projection.Item
}

// runChild runs the contained child: isolate.Run, which tests replace to
// hand the host a forged response.
var runChild = isolate.Run

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

// replayIsolated is Replay, also returning the child's response, checked
// (nil when the replay failed). The host reads the recording itself first
// (a recording past its bounds or defective is refused before a child
// starts), names the recording and its kept log from its own arguments,
// waits for the child no longer than the time limit and a margin, and
// believes the child's response only once judge found it consistent with
// what the host read (see judge.go).
func replayIsolated(ctx context.Context, dir string, opt Options) (*Result, *response) {
	start := time.Now()
	res := &Result{Name: filepath.Base(filepath.Clean(dir)), Dir: dir}
	defer func() { res.Duration = time.Since(start) }()
	fail := func(err error) *Result {
		res.Verdict, res.Error = Failed, err.Error()
		return res
	}
	if err := resolveRipgrep(&opt); err != nil {
		return fail(err), nil
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
	// The child names the recording by the directory it is given; so does
	// the host, and what it writes is named so.
	res.Name = filepath.Base(abs)
	p, err := prepareShared(abs, opt.Recording, res)
	if err != nil {
		return fail(err), nil
	}
	var seen isolate.Containment
	out, err := startChild(ctx, abs, opt, &seen)
	contained := ""
	if seen.Root != nil {
		contained = seen.String()
	}
	if err != nil {
		res.Contained = contained
		return fail(fmt.Errorf("isolated replay: %w", err)), nil
	}
	resp, err := decodeResponse(out)
	if err == nil {
		err = judge(p, res, abs, opt, resp)
	}
	if err != nil {
		*res = Result{Name: res.Name, Dir: dir}
		return fail(fmt.Errorf("isolated replay: the contained replay's response is refused (%w); it is an error, never a match", err)), nil
	}
	res.Contained = contained
	if err := keepLog(opt, res, resp.Log); err != nil {
		return fail(err), nil
	}
	return res, resp
}

// prepareShared is prepare under the recording directory's shared lock,
// as the child reads it (package fileset: never a set a writer left half
// replaced).
func prepareShared(dir string, b recording.Bounds, res *Result) (*prepared, error) {
	release, err := fileset.Shared(dir)
	if err != nil {
		return nil, err
	}
	defer release()
	return prepare(dir, b, res)
}

// hostMargin is how long the host waits for the child past the time limit
// of the replay it runs (which stops itself at the limit, then reports)
// before it stops the child (SIGTERM, SIGKILL after isolate.Grace).
const hostMargin = time.Minute

// startChild runs the contained replay of the recording at abs and
// returns its response, at most maxResponse bytes; seen receives what the
// child could see of the host.
func startChild(ctx context.Context, abs string, opt Options, seen *isolate.Containment) ([]byte, error) {
	var err error
	if opt.LauncherPath != "" {
		if opt.LauncherPath, err = filepath.Abs(opt.LauncherPath); err != nil {
			return nil, err
		}
	}
	req, err := json.Marshal(request{Dir: abs, Options: opt})
	if err != nil {
		return nil, err
	}
	share := []string{abs}
	if opt.Ripgrep != "" {
		share = append(share, opt.Ripgrep)
	}
	if opt.LauncherPath != "" {
		share = append(share, opt.LauncherPath)
	} else if def := sandbox.DefaultLauncherPath(); fileExists(def) {
		// The child's default is landlock-run beside this executable: found
		// here, before the child's private /tmp hides it when the binaries
		// were built into a directory under /tmp.
		share = append(share, def)
	}
	ctx, cancel := context.WithTimeout(ctx, opt.timeout()+hostMargin)
	defer cancel()
	out, err := runChild(ctx, isolatedName, req, isolate.Options{Stderr: opt.Stderr, Share: share, TmpSize: opt.TmpSize, MaxResponse: maxResponse(opt.Recording), Bounds: opt.Bounds, Seen: seen})
	if err != nil && ctx.Err() == context.DeadlineExceeded {
		err = fmt.Errorf("no answer within the time limit (%s) and a margin of %s: %w", opt.timeout(), hostMargin, err)
	}
	return out, err
}

// keepLog writes our log to Options.LogDir when asked, as
// <LogDir>/<res.Name>.session.jsonl: res.Name is the base name of the
// directory the host was given, one element, so the file is LogDir's own.
func keepLog(opt Options, res *Result, log []byte) error {
	if opt.LogDir == "" || log == nil {
		return nil
	}
	file := res.Name + ".session.jsonl"
	if !filepath.IsLocal(file) || filepath.Base(file) != file {
		return fmt.Errorf("-logs: the recording's name %q makes no file name of its own", res.Name)
	}
	// The directory, never its parents (a mistyped path must not grow a
	// tree); replays running at once may make it together.
	if err := os.Mkdir(opt.LogDir, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	res.LogPath = filepath.Join(opt.LogDir, file)
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
	return res, responseOf(res, log)
}

// responseOf is the response of a replay that gave res and our log.
func responseOf(res *Result, log []byte) *response {
	resp := &response{Result: res, Expected: res.Expected, Got: res.Got, Log: log, Run: res.run}
	for _, c := range res.Children {
		resp.Children = append(resp.Children, childSides{Expected: c.Expected, Got: c.Got})
	}
	return resp
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
	return json.Marshal(responseOf(res, log))
}
