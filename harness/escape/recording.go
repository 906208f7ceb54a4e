package escape

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"strconv"
	"time"

	"github.com/dshsim/dshsim/harness/replay"
	"github.com/dshsim/dshsim/harness/replay/hostile"
	"github.com/dshsim/dshsim/harness/replay/isolate"
	"github.com/dshsim/dshsim/sandbox"
)

// Replayed is the column of the hostile-recordings table: dsh-replay's
// contained replay (harness/replay.Replay, package
// harness/replay/isolate), which replays each hostile recording
// ([ClassRecording]) as dsh-replay does. Its modes are the ones the
// recordings run their attacks in; each attempt runs in its own
// ([Attempt.Mode]).
const Replayed = "dsh-replay"

// RecordingBackends are the columns of the hostile-recordings table.
var RecordingBackends = []string{Replayed}

// Contained is the replay column's enforcement in the backend reports: what
// package isolate claims, listed as its Isolated entries.
const Contained sandbox.Enforcement = "contained"

// TempPrivate is the replay's temp area: a bounded tmpfs of its own on /tmp.
const TempPrivate = "private-tmpfs"

// replayBackend is the [Replayed] column.
func replayBackend() Backend {
	return Backend{Name: Replayed, Modes: []sandbox.Mode{sandbox.WorkspaceWrite, sandbox.DangerFullAccess}, Report: Report{
		Enforcement: Contained, TempArea: TempPrivate,
		Isolated: []string{
			"host-fs: a root of its own: the system directories read-only, nosuid and nodev, nothing else of the host's filesystem",
			"tmp: /tmp is a bounded tmpfs of its own",
			"network: a network namespace of its own, loopback only",
			"processes: a PID namespace of its own, killed when the replay ends",
			"seed: workspace/ copied streaming under bounds, links only inside it",
		}}}
}

// RecordingAttempts are the hostile recordings as attempts of class
// [ClassRecording]: each needs the listener, and the fixtures its case
// names (/dev/shm, a run directory under the host's /tmp).
func RecordingAttempts() []Attempt {
	var out []Attempt
	for _, c := range hostile.Cases() {
		a := Attempt{Name: c.Name, Class: ClassRecording, Attack: c.Attack, Needs: []string{NeedListener}, Settle: c.Settle, Mode: c.Mode}
		if c.Shm {
			a.Needs = append(a.Needs, NeedShm)
		}
		if c.UnderTmp {
			a.Needs = append(a.Needs, NeedTmpWorkspace)
		}
		out = append(out, a)
	}
	return out
}

// Recordings are the hostile recordings among all.
func Recordings(all []Attempt) []Attempt { return OfClass(all, ClassRecording) }

// observeRecording makes the attempt's hostile recording against the run
// directory ($OUT the directory, $TARGET the file, $SHM, the listener, the
// run token as the mark of what it leaves behind), replays it as dsh-replay
// does between two snapshots of the host side, and fills res: a change is
// GotThrough (never admitted), no change with the attack run to its end (or
// refused as it must be) is Blocked, and no change from an attack that did
// not run is RunnerFailed, naming what was missing.
func (r *attemptRun) observeRecording(ctx context.Context, res *Result) error {
	c, ok := hostile.Find(r.a.Name)
	if !ok {
		return fmt.Errorf("no hostile recording %q", r.a.Name)
	}
	if r.cfg.Transcripts == "" {
		return errors.New("the hostile recordings need Config.Transcripts (the upstream recordings they are made from)")
	}
	tgt := hostile.Target{Dir: r.out, File: r.target, Shm: r.roots["shm"], Port: r.port, Mark: runEnv + "=" + r.token}
	if err := tgt.Expose(); err != nil {
		return err
	}
	dir := filepath.Join(r.dir, "recording")
	if err := c.Make(r.cfg.Transcripts, dir, tgt); err != nil {
		return err
	}
	before, err := Take(r.roots, nil)
	if err != nil {
		return err
	}
	var childOut bytes.Buffer
	rr := replay.Replay(ctx, dir, replay.Options{LauncherPath: r.cfg.Runner, Stderr: &childOut})
	res.Stdout, res.Stderr = hostile.Outcomes(rr.Got), rr.Error+"\n"+childOut.String()
	claims, cerr := c.Check(rr)
	left := r.leftovers()
	time.Sleep(r.a.Settle)
	seen := append(r.harnessChanges(res), left...)
	for _, cl := range claims {
		seen = append(seen, Change{"replay/results", cl})
	}
	if cerr != nil {
		res.Outcome, res.Why = RunnerFailed, cerr.Error()
	}
	return r.conclude(res, before, nil, seen)
}

// listener listens on the host's loopback: $HARNESS_PORT, which nothing
// may reach ([attemptRun.harnessChanges]).
func (r *attemptRun) listener(context.Context) error {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("listener: %w", err)
	}
	r.tcp = l.(*net.TCPListener)
	r.port = r.tcp.Addr().(*net.TCPAddr).Port
	r.teardown = append(r.teardown, func() { l.Close() })
	r.env = append(r.env, "HARNESS_PORT="+strconv.Itoa(r.port))
	return nil
}

// containment is why a hostile recording cannot run here ("" when it can):
// dsh-replay refuses every recording where it cannot contain one.
func containment() string {
	if err := isolate.Available(); err != nil {
		return "needs a contained replay (user namespaces, or CAP_SYS_ADMIN): " + err.Error()
	}
	return ""
}
