package sandbox

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

var lineSplit = regexp.MustCompile(`\r?\n`)

// --8<-- [start:outcome-order]
// Classify reads how a run of c.Argv ended, in precedence order: a runner
// failure first (the command never ran: the report says RunnerFailed and the
// error is a [*UnavailableError] whose detail is the matched stderr line),
// then a denial in the backend's own dialect; otherwise the exit code is the
// command's own. A signal-killed process is neither.
func (c ConfinedArgv) Classify(exitCode int, signaled bool, stderr string) (*Report, error) {
	r := &Report{Mode: c.Policy.Mode, Backend: c.Backend, Enforcement: c.Enforcement, Ungoverned: c.Ungoverned, Fallback: c.Fallback}
	if detail, ok := ClassifyRunnerFailure(exitCode, signaled, stderr, c.RunnerFailureRules); ok {
		r.RunnerFailed = true
		return r, &UnavailableError{Mode: r.Mode, Detail: detail}
	}
	r.Denied = IsDenial(exitCode, signaled, stderr, c.DenialSignatures)
	return r, nil
}

// --8<-- [end:outcome-order]

// --8<-- [start:classify-runner-failure]
// ClassifyRunnerFailure decides whether a runner failed before running the
// command, as upstream's classifier decides it. A signal-killed process or exit 0 never matches. Stderr
// is split into lines on \r?\n (no trimming). Each rule in order: skipped if
// it has allowed exit codes that do not include exitCode; otherwise the first
// line that is not (whole-line, case-insensitively) one of the rule's
// informational lines and contains (case-insensitively) one of its non-blank
// fatal signatures matches, and that original line is the detail.
func ClassifyRunnerFailure(exitCode int, signaled bool, stderr string, rules []RunnerFailureRule) (detail string, ok bool) {
	if signaled || exitCode == 0 {
		return "", false
	}
	lines := lineSplit.Split(stderr, -1)
	for _, rule := range rules {
		if rule.AllowedExitCodes != nil && !containsInt(rule.AllowedExitCodes, exitCode) {
			continue
		}
		info := map[string]bool{}
		for _, l := range rule.InformationalLines {
			info[strings.ToLower(l)] = true
		}
		var fatal []string
		for _, s := range rule.FatalSignatures {
			if strings.TrimSpace(s) != "" {
				fatal = append(fatal, strings.ToLower(s))
			}
		}
		for _, line := range lines {
			low := strings.ToLower(line)
			if info[low] {
				continue
			}
			for _, f := range fatal {
				if strings.Contains(low, f) {
					return line, true
				}
			}
		}
	}
	return "", false
}

// --8<-- [end:classify-runner-failure]

func containsInt(xs []int, x int) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

// IsDenial reports a sandbox denial, as upstream does: a non-zero exit (not a
// signal) whose whole stderr, lowercased, contains one of the backend's
// denial signatures. Informational lines are not removed.
func IsDenial(exitCode int, signaled bool, stderr string, signatures []string) bool {
	if signaled || exitCode == 0 {
		return false
	}
	low := strings.ToLower(stderr)
	for _, s := range signatures {
		if strings.Contains(low, strings.ToLower(s)) {
			return true
		}
	}
	return false
}

// StartError is how a failed start of c.Argv reads (Node's spawn error as
// upstream hands it on, mapped from Go's): attributed to the runner ([isRunnerSpawnFailure]: the runner was
// missing or not executable), it is a [*UnavailableError] whose detail reads
// as upstream's ("Error: spawn <runner> ENOENT"); any other error, and every
// error of a confiner that starts the command itself (no runner), comes back
// unchanged. resolved is the path the runner resolved to (exec.Cmd.Path),
// workdir the command's working directory.
func (c ConfinedArgv) StartError(err error, resolved, workdir string) error {
	if c.Start == nil && len(c.Argv) > 0 && isRunnerSpawnFailure(err, c.Argv[0], resolved, workdir) {
		return &UnavailableError{Mode: c.Policy.Mode, Detail: spawnFailureDetail(err, c.Argv[0])}
	}
	return err
}

// isRunnerSpawnFailure attributes a failed start to the runner. All must hold: the runner program is known; the workdir is
// usable (a directory with search permission, checked now); and err is either
// exec's "not found" for the bare name runner (Node's error without a path),
// or a fork/exec *fs.PathError whose path is the runner (as spelled or as
// resolved) with ENOENT or EACCES. Everything else (ENOEXEC, ENOTDIR, EPERM,
// EMFILE, a chdir failure, a mismatched path...) is an ordinary start error.
func isRunnerSpawnFailure(err error, runner, resolved, workdir string) bool {
	if runner == "" || err == nil || !workdirUsable(workdir) {
		return false
	}
	var ee *exec.Error
	if errors.As(err, &ee) {
		return ee.Name == runner && (errors.Is(ee.Err, exec.ErrNotFound) || errors.Is(ee.Err, syscall.ENOENT) || errors.Is(ee.Err, syscall.EACCES))
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		if pe.Op != "fork/exec" || pe.Path == "" || (pe.Path != runner && pe.Path != resolved) {
			return false
		}
		return errors.Is(pe.Err, syscall.ENOENT) || errors.Is(pe.Err, syscall.EACCES)
	}
	return false
}

// workdirUsable reports whether dir is a directory the process may search.
func workdirUsable(dir string) bool {
	if dir == "" {
		dir = "."
	}
	st, err := os.Stat(dir)
	return err == nil && st.IsDir() && unix.Access(dir, unix.X_OK) == nil
}

// spawnFailureDetail renders a runner spawn failure the way upstream's detail
// reads: "Error: " and Node's text ("Error: spawn <runner> ENOENT").
func spawnFailureDetail(err error, runner string) string {
	text, _ := NodeSpawnError(runner, err)
	return "Error: " + text
}
