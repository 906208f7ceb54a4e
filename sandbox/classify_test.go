package sandbox

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

var landlockRules = func() []RunnerFailureRule { d, _ := DialectOf(BackendLandlock); return d.RunnerFailureRules }()

func TestClassifyRunnerFailure(t *testing.T) {
	notice := LandlockPartialNotice
	fake := []RunnerFailureRule{{AllowedExitCodes: []int{125}, FatalSignatures: []string{"fake-runner: "}}}
	tests := []struct {
		name       string
		exit       int
		signaled   bool
		stderr     string
		rules      []RunnerFailureRule
		wantDetail string
		wantOK     bool
	}{
		{name: "exit 0 never matches", exit: 0, stderr: "landlock-run: exec failed: x", rules: landlockRules},
		{name: "signal-killed never matches", exit: -1, signaled: true, stderr: "landlock-run: exec failed: x", rules: landlockRules},
		{name: "notice alone at exit 1 is the command's failure", exit: 1, stderr: notice + "\n", rules: landlockRules},
		{name: "notice alone at exit 2 is the command's failure", exit: 2, stderr: notice + "\n", rules: landlockRules},
		{name: "notice alone at exit 125 is the command's failure", exit: 125, stderr: notice + "\n", rules: landlockRules},
		{name: "uppercased notice is still excluded", exit: 125, stderr: "LANDLOCK-RUN: PARTIAL ENFORCEMENT (OLDER LANDLOCK ABI)\n", rules: landlockRules},
		{name: "notice with extra detail is fatal (whole-line exclusion only)", exit: 125, stderr: notice + ": extra detail\n", rules: landlockRules,
			wantDetail: notice + ": extra detail", wantOK: true},
		{name: "notice then exec failure reports the second line", exit: 125, stderr: notice + "\nlandlock-run: exec failed: No such file or directory\n", rules: landlockRules,
			wantDetail: "landlock-run: exec failed: No such file or directory", wantOK: true},
		{name: "crlf lines are split", exit: 125, stderr: notice + "\r\nlandlock-run: ruleset error\r\n", rules: landlockRules,
			wantDetail: "landlock-run: ruleset error", wantOK: true},
		{name: "landlock fatal line at exit 1 is not a runner failure", exit: 1, stderr: "landlock-run: landlock ruleset error: Invalid argument\n", rules: landlockRules},
		{name: "landlock fatal line at exit 2 is not a runner failure", exit: 2, stderr: "landlock-run: landlock ruleset error: Invalid argument\n", rules: landlockRules},
		{name: "landlock fatal line at 125 is the detail", exit: 125, stderr: "landlock-run: landlock ruleset error: Invalid argument\n", rules: landlockRules,
			wantDetail: "landlock-run: landlock ruleset error: Invalid argument", wantOK: true},
		{name: "unknown future runner line at 125 fails closed", exit: 125, stderr: "landlock-run: something new\n", rules: landlockRules,
			wantDetail: "landlock-run: something new", wantOK: true},
		{name: "child exit 125 with only the notice is ordinary", exit: 125, stderr: notice + "\nchild said 125\n", rules: landlockRules},
		{name: "bwrap has no exit gate", exit: 1, stderr: "bwrap: Can't mount proc on /newroot/proc: Operation not permitted\n",
			rules: mustDialect(BackendBwrap).RunnerFailureRules, wantDetail: "bwrap: Can't mount proc on /newroot/proc: Operation not permitted", wantOK: true},
		{name: "windows runner gated on 127", exit: 1, stderr: "windows-acl-run: cannot start\n", rules: mustDialect(BackendWindowsACL).RunnerFailureRules},
		{name: "windows runner at 127 is a runner failure", exit: 127, stderr: "windows-acl-run: cannot start\n", rules: mustDialect(BackendWindowsACL).RunnerFailureRules,
			wantDetail: "windows-acl-run: cannot start", wantOK: true},
		{name: "empty and blank fatal signatures are ignored", exit: 125, stderr: notice + "\n", rules: []RunnerFailureRule{{AllowedExitCodes: []int{125}, FatalSignatures: []string{"", "  "}}}},
		{name: "empty signatures ignored with empty stderr", exit: 125, stderr: "", rules: []RunnerFailureRule{{FatalSignatures: []string{""}}}},
		{name: "valid signature beside empty ones still matches a later line", exit: 125, stderr: "first\nrunner: broken\n",
			rules: []RunnerFailureRule{{FatalSignatures: []string{"", "runner: "}}}, wantDetail: "runner: broken", wantOK: true},
		{name: "runner failure outranks denial words", exit: 125, stderr: "fake-runner: cannot open rule path: /x: Permission denied\n", rules: fake,
			wantDetail: "fake-runner: cannot open rule path: /x: Permission denied", wantOK: true},
		{name: "later rule is tried when the first is gated out", exit: 1, stderr: "other: broke\n",
			rules:      []RunnerFailureRule{{AllowedExitCodes: []int{125}, FatalSignatures: []string{"other: "}}, {FatalSignatures: []string{"other: "}}},
			wantDetail: "other: broke", wantOK: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			detail, ok := ClassifyRunnerFailure(tc.exit, tc.signaled, tc.stderr, tc.rules)
			if ok != tc.wantOK || detail != tc.wantDetail {
				t.Errorf("ClassifyRunnerFailure(%d, %q) = (%q, %v), want (%q, %v)", tc.exit, tc.stderr, detail, ok, tc.wantDetail, tc.wantOK)
			}
		})
	}
}

func TestClassifyKnownFatalLinesReturnThemselves(t *testing.T) {
	for _, line := range []string{
		"landlock-run: usage error: missing `-- <argv>...` command",
		"landlock-run: landlock is not enforced by this kernel (ABI unsupported or disabled)",
		"landlock-run: cannot open rule path: /ws: No such file or directory",
		"landlock-run: landlock ruleset error: Invalid argument",
		"landlock-run: exec failed: No such file or directory",
		"landlock-run: out of memory",
		"landlock-run: a future failure",
	} {
		if got, ok := ClassifyRunnerFailure(125, false, line+"\n", landlockRules); !ok || got != line {
			t.Errorf("%q classified as (%q, %v)", line, got, ok)
		}
	}
}

func mustDialect(b string) Dialect {
	d, ok := DialectOf(b)
	if !ok {
		panic(b)
	}
	return d
}

func TestIsDenial(t *testing.T) {
	linux := []string{"read-only file system", "permission denied"}
	tests := []struct {
		name     string
		exit     int
		signaled bool
		stderr   string
		sigs     []string
		want     bool
	}{
		{name: "exit 0 is never a denial", exit: 0, stderr: "Read-only file system", sigs: linux},
		{name: "signal is never a denial", exit: -1, signaled: true, stderr: "Permission denied", sigs: linux},
		{name: "EROFS text is a Linux denial", exit: 1, stderr: "bash: /x: Read-only file system", sigs: linux, want: true},
		{name: "EACCES text is a Linux denial", exit: 1, stderr: "bash: /x: Permission denied", sigs: linux, want: true},
		{name: "mount EPERM is not a Linux denial", exit: 1, stderr: "mount: Operation not permitted", sigs: linux},
		{name: "ENOENT text is not a denial", exit: 1, stderr: "cat: /x: No such file or directory", sigs: linux},
		{name: "EPERM is a Seatbelt denial", exit: 1, stderr: "touch: /x: Operation not permitted", sigs: mustDialect(BackendSeatbelt).DenialSignatures, want: true},
		{name: "EACCES is not a bwrap denial", exit: 1, stderr: "bash: /x: Permission denied", sigs: mustDialect(BackendBwrap).DenialSignatures},
		{name: "notice plus denial is a denial", exit: 1, stderr: LandlockPartialNotice + "\nchild: Permission denied\n", sigs: mustDialect(BackendLandlock).DenialSignatures, want: true},
		{name: "EPERM is a Windows ACL denial", exit: 1, stderr: "Operation not permitted", sigs: mustDialect(BackendWindowsACL).DenialSignatures, want: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := IsDenial(tc.exit, tc.signaled, tc.stderr, tc.sigs); got != tc.want {
				t.Errorf("IsDenial(%d, %q, %q) = %v, want %v", tc.exit, tc.stderr, tc.sigs, got, tc.want)
			}
		})
	}
}

func TestIsRunnerSpawnFailure(t *testing.T) {
	wd := t.TempDir()
	pathErr := func(op, path string, errno syscall.Errno) error { return &fs.PathError{Op: op, Path: path, Err: errno} }
	tests := []struct {
		name     string
		err      error
		runner   string
		resolved string
		workdir  string
		want     bool
	}{
		{name: "missing absolute runner (ENOENT on its path)", err: pathErr("fork/exec", "/opt/r", syscall.ENOENT), runner: "/opt/r", resolved: "/opt/r", workdir: wd, want: true},
		{name: "non-executable runner (EACCES on its path)", err: pathErr("fork/exec", "/opt/r", syscall.EACCES), runner: "/opt/r", resolved: "/opt/r", workdir: wd, want: true},
		{name: "bare runner not on PATH", err: &exec.Error{Name: "r", Err: exec.ErrNotFound}, runner: "r", workdir: wd, want: true},
		{name: "bare runner with missing interpreter (resolved path)", err: pathErr("fork/exec", "/usr/bin/r", syscall.ENOENT), runner: "r", resolved: "/usr/bin/r", workdir: wd, want: true},
		{name: "ENOEXEC stays ordinary", err: pathErr("fork/exec", "/opt/r", syscall.ENOEXEC), runner: "/opt/r", resolved: "/opt/r", workdir: wd},
		{name: "ENOTDIR stays ordinary", err: pathErr("fork/exec", "/opt/r", syscall.ENOTDIR), runner: "/opt/r", workdir: wd},
		{name: "EPERM stays ordinary", err: pathErr("fork/exec", "/opt/r", syscall.EPERM), runner: "/opt/r", workdir: wd},
		{name: "EMFILE stays ordinary", err: pathErr("fork/exec", "/opt/r", syscall.EMFILE), runner: "/opt/r", workdir: wd},
		{name: "ENOMEM stays ordinary", err: pathErr("fork/exec", "/opt/r", syscall.ENOMEM), runner: "/opt/r", workdir: wd},
		{name: "open syscall stays ordinary", err: pathErr("open", "/opt/r", syscall.ENOENT), runner: "/opt/r", workdir: wd},
		{name: "chdir failure stays ordinary", err: pathErr("chdir", wd, syscall.ENOENT), runner: "/opt/r", workdir: wd},
		{name: "mismatched path stays ordinary", err: pathErr("fork/exec", "/opt/other", syscall.ENOENT), runner: "/opt/r", resolved: "/opt/r", workdir: wd},
		{name: "empty path stays ordinary", err: pathErr("fork/exec", "", syscall.ENOENT), runner: "/opt/r", workdir: wd},
		{name: "other program not found stays ordinary", err: &exec.Error{Name: "other", Err: exec.ErrNotFound}, runner: "r", workdir: wd},
		{name: "unknown runner stays ordinary", err: pathErr("fork/exec", "/opt/r", syscall.ENOENT), runner: "", workdir: wd},
		{name: "unusable workdir stays ordinary", err: pathErr("fork/exec", "/opt/r", syscall.ENOENT), runner: "/opt/r", workdir: filepath.Join(wd, "missing")},
		{name: "nil error is no failure", err: nil, runner: "/opt/r", workdir: wd},
		{name: "unstructured error stays ordinary", err: os.ErrInvalid, runner: "/opt/r", workdir: wd},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := isRunnerSpawnFailure(tc.err, tc.runner, tc.resolved, tc.workdir); got != tc.want {
				t.Errorf("isRunnerSpawnFailure(%v, %q) = %v, want %v", tc.err, tc.runner, got, tc.want)
			}
		})
	}
	if got := spawnFailureDetail(pathErr("fork/exec", "/opt/r", syscall.ENOENT), "/opt/r"); got != "Error: spawn /opt/r ENOENT" {
		t.Errorf("spawnFailureDetail = %q", got)
	}
	if got := spawnFailureDetail(pathErr("fork/exec", "/opt/r", syscall.EACCES), "/opt/r"); got != "Error: spawn /opt/r EACCES" {
		t.Errorf("spawnFailureDetail = %q", got)
	}
}

var execLookPath = exec.LookPath

// TestClassifyOrder: the report of a run carries the confiner's facts, and
// a runner failure wins over a denial (upstream's precedence), a signal is
// neither.
func TestClassifyOrder(t *testing.T) {
	d := mustDialect(BackendLandlock)
	w := ConfinedArgv{Backend: BackendLandlock, Enforcement: Partial, DenialSignatures: d.DenialSignatures, RunnerFailureRules: d.RunnerFailureRules,
		Ungoverned: d.Ungoverned, Policy: Policy{Mode: WorkspaceWrite, WorkspaceRoot: "/ws"}}
	tests := []struct {
		name               string
		exit               int
		signaled           bool
		stderr             string
		denied, runnerFail bool
	}{
		{name: "the command's own exit", exit: 1, stderr: "grep: no match\n"},
		{name: "a denial", exit: 1, stderr: "touch: cannot touch '/x': Permission denied\n", denied: true},
		{name: "a runner failure wins over a denial", exit: 125, stderr: "landlock-run: cannot open rule path: /x: Permission denied\n", runnerFail: true},
		{name: "a signal is neither", exit: -1, signaled: true, stderr: "landlock-run: x\nPermission denied\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := w.Classify(tc.exit, tc.signaled, tc.stderr)
			if r.Mode != WorkspaceWrite || r.Backend != BackendLandlock || r.Enforcement != Partial || len(r.Ungoverned) != len(d.Ungoverned) {
				t.Errorf("report lost the confiner's facts: %+v", r)
			}
			var ue *UnavailableError
			if r.Denied != tc.denied || r.RunnerFailed != tc.runnerFail || errors.As(err, &ue) != tc.runnerFail {
				t.Errorf("report %+v, err %v; want denied %v runner failed %v", r, err, tc.denied, tc.runnerFail)
			}
			if tc.runnerFail && (ue.Mode != WorkspaceWrite || ue.Detail != strings.TrimSuffix(tc.stderr, "\n")) {
				t.Errorf("runner failure error %+v", ue)
			}
		})
	}
}
