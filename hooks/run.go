package hooks

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/dshsim/dshsim/sandbox"
	"github.com/dshsim/dshsim/sandbox/spawn"
)

// Upstream's executor limits (bash-local).
const (
	// DefaultTimeoutMs is the timeout of a hook without its own (10 min).
	DefaultTimeoutMs = 600000
	// MaxTimeoutMs caps every hook timeout (10 min).
	MaxTimeoutMs = 600000
	// DefaultGrace is the SIGTERM to SIGKILL delay of a timed-out hook.
	DefaultGrace = 3 * time.Second
	// DefaultTailBytes is the retained tail of each output stream.
	DefaultTailBytes = 64000
	// MsgBadTimeout is the executor's VERBATIM rejection of a non-positive
	// or non-finite timeout; the hook never starts.
	MsgBadTimeout = "bash-local: request.timeoutMs must be a positive finite number"
)

// Runtime is how hook commands run: upstream's shell executor, here
// sandbox/spawn.
type Runtime struct {
	// Sandbox is the policy every hook runs under: the deployment's default
	// mode and configured root, never the session's mode override (upstream
	// sends no policy with a hook request). danger-full-access runs
	// unconfined.
	Sandbox sandbox.Policy
	// Confiner confines the confined modes (required for them: without it a
	// confined hook cannot start, which is a non-blocking failure, or a
	// block under Strict).
	Confiner spawn.Confiner
	// Env is the parent environment (nil: this process's).
	Env []string
	// DefaultDir is the working directory of a call without a session cwd
	// ("" : this process's).
	DefaultDir string
	// Shell runs the command as Shell -c <command> ("" : bash).
	Shell string
	// Grace is the SIGTERM to SIGKILL delay (0: DefaultGrace).
	Grace time.Duration
	// TailBytes is the retained tail of stdout and stderr (0: DefaultTailBytes).
	TailBytes int
	// OutputDir receives an overflowing stream for the moment it is captured;
	// the file is removed after the run, as no hook reads it ("" : the temp dir).
	OutputDir string
}

// settled is one finished (or never started) hook process.
type settled struct {
	exitCode *int   // nil: signal death, timeout kill, or not started
	stdout   string // retained tails
	stderr   string // or the executor's error message when it did not start
	started  bool
	timedOut bool
	signal   string
	timeout  float64 // ms
}

// cannotRun reports a run that did not produce a verdict of the hook's own:
// it never started, was killed (timeout or signal), or the shell could not
// run the command (126, 127). Strict mode blocks on these.
func (s settled) cannotRun() (string, bool) {
	switch {
	case !s.started:
		return "it could not start: " + s.stderr, true
	case s.timedOut:
		return fmt.Sprintf("it timed out after %sms", trimFloat(s.timeout)), true
	case s.exitCode == nil:
		return "it was killed by " + s.signal, true
	case *s.exitCode == 126 || *s.exitCode == 127:
		return fmt.Sprintf("the shell could not run it (exit code %d: %s)", *s.exitCode, summary(s.stderr, 200)), true
	}
	return "", false
}

func trimFloat(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// timeoutMs is a hook's effective timeout: its own seconds × 1000, else the
// default; ok is false for a non-positive or non-finite value (the executor
// rejects it before spawning); the value is capped at MaxTimeoutMs.
func timeoutMs(h Hook, defaultMs float64) (ms float64, ok bool) {
	ms = defaultMs
	if h.TimeoutSec != nil {
		ms = *h.TimeoutSec * 1000
	}
	if !(ms > 0) || math.IsInf(ms, 0) {
		return ms, false
	}
	return math.Min(ms, MaxTimeoutMs), true
}

// run starts one hook and waits for it. It never fails: a hook that cannot
// start is a settled run without an exit code whose stderr is the reason.
// Cancelling ctx kills the process group (SIGTERM, then SIGKILL after the grace).
func (rt *Runtime) run(ctx context.Context, h Hook, defaultMs float64, stdin []byte, dir string, env []string) settled {
	ms, ok := timeoutMs(h, defaultMs)
	if !ok {
		return settled{stderr: MsgBadTimeout, timeout: ms}
	}
	timeout := time.Duration(ms * float64(time.Millisecond))
	if timeout <= 0 {
		timeout = 1 // a positive fraction of a nanosecond: expire at once, never "no timeout"
	}
	shell := rt.Shell
	if shell == "" {
		shell = "bash"
	}
	grace := rt.Grace
	if grace <= 0 {
		grace = DefaultGrace
	}
	tail := rt.TailBytes
	if tail <= 0 {
		tail = DefaultTailBytes
	}
	req := spawn.Request{
		Argv: []string{shell, "-c", h.Command}, Policy: rt.Sandbox, Dir: dir, Env: env,
		Stdin: bytes.NewReader(stdin), Timeout: timeout, Grace: grace, TailBytes: tail, OutputDir: rt.OutputDir,
	}
	if rt.Confiner != nil {
		req.Confiner = rt.Confiner
	}
	p, err := spawn.Start(ctx, req)
	if err != nil {
		return settled{stderr: err.Error(), timeout: ms}
	}
	res, werr := p.Wait()
	for _, f := range []string{res.Stdout.FullPath, res.Stderr.FullPath} {
		if f != "" {
			os.Remove(f)
		}
	}
	s := settled{stdout: res.Stdout.Text, stderr: res.Stderr.Text, started: true, timedOut: res.TimedOut, signal: res.Signal, timeout: ms}
	switch {
	case werr != nil:
		// The sandbox runner failed before running the command: no exit code.
		s.started, s.stderr = false, werr.Error()
	case !res.Signaled:
		code := res.ExitCode
		s.exitCode = &code
	}
	return s
}

// secretName is upstream's filter of the parent environment.
var secretName = regexp.MustCompile(`(?i)KEY|PASSWORD|SECRET|TOKEN`)

// environment is a hook's environment: the parent's minus secret-looking
// names and DSH_*, then NO_COLOR=1 TERM=dumb PAGER=cat GIT_PAGER=cat, then
// (Claude Code) CLAUDE_PROJECT_DIR when projectDir is known.
func environment(parent []string, d *Dialect, projectDir string) []string {
	over := []string{"NO_COLOR=1", "TERM=dumb", "PAGER=cat", "GIT_PAGER=cat"}
	if d.projectDirEnv && projectDir != "" {
		over = append(over, "CLAUDE_PROJECT_DIR="+projectDir)
	}
	overridden := map[string]bool{}
	for _, kv := range over {
		k, _, _ := strings.Cut(kv, "=")
		overridden[k] = true
	}
	out := make([]string, 0, len(parent)+len(over))
	for _, kv := range parent {
		k, _, _ := strings.Cut(kv, "=")
		if secretName.MatchString(k) || strings.HasPrefix(strings.ToUpper(k), "DSH_") || overridden[k] {
			continue
		}
		out = append(out, kv)
	}
	return append(out, over...)
}
