package sandbox

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strconv"
)

// --8<-- [start:modes]
// Mode is a sandbox mode. Only file writes are governed: reads, network, process
// visibility, devices and credentials are not promised by any mode.
type Mode string

// The three modes, narrowest first.
const (
	// ReadOnly allows no file writes (POSIX backends still allow the /dev/null sink).
	ReadOnly Mode = "read-only"
	// WorkspaceWrite allows writes under the workspace root and a backend-defined temp area.
	WorkspaceWrite Mode = "workspace-write"
	// DangerFullAccess is no confinement at all; a provider is never called for it.
	DangerFullAccess Mode = "danger-full-access"
)

// Modes lists the modes in widening order.
var Modes = []Mode{ReadOnly, WorkspaceWrite, DangerFullAccess}

// --8<-- [end:modes]

// ParseMode returns the mode named s or an error naming the value.
func ParseMode(s string) (Mode, error) {
	for _, m := range Modes {
		if string(m) == s {
			return m, nil
		}
	}
	return "", fmt.Errorf("unknown sandbox mode %q (want one of read-only, workspace-write, danger-full-access)", s)
}

// Confined reports whether m may be passed to a provider (read-only or workspace-write).
func (m Mode) Confined() bool { return m == ReadOnly || m == WorkspaceWrite }

// String returns the mode name.
func (m Mode) String() string { return string(m) }

// Enforcement says how much of a mode's promise a backend governs.
type Enforcement string

const (
	// Full means the backend governs every file effect the mode promises.
	Full Enforcement = "full"
	// Partial means only a subset is governed (Landlock ABI < 5, Windows ACL runner).
	Partial Enforcement = "partial"
)

// Policy is the complete per-call execution policy. It is never fixed on a
// provider: concurrent calls may carry different modes and roots.
type Policy struct {
	// Mode is the mode of this one call.
	Mode Mode `json:"mode"`
	// WorkspaceRoot is an absolute path, carried even when the mode does not use it.
	WorkspaceRoot string `json:"workspaceRoot"`
	// SessionID is opaque; empty for agentless calls.
	SessionID string `json:"sessionId,omitempty"`
	// WorkspaceID is the device and inode of the workspace root that
	// [Validate] opened (without following a symlink) for workspace-write;
	// zero before validation. The Landlock runner (--rw-inode) and package
	// sandbox/inproc refuse a root that opens as another directory. Ours.
	WorkspaceID FileID `json:"-"`
	// Limits bound the call's processes (zero: none); set on the command
	// before its first instruction, whatever confines it. Ours.
	Limits Limits `json:"-"`
}

// FileID names a file by device and inode number, as fstat reports them.
type FileID struct{ Dev, Ino uint64 }

// String renders the id as the runner's --rw-inode operand, "<dev>:<ino>".
func (id FileID) String() string {
	return strconv.FormatUint(id.Dev, 10) + ":" + strconv.FormatUint(id.Ino, 10)
}

// RunnerFailureRule is evidence that a runner failed before executing the
// wrapped command. Exit status alone never proves a runner failure.
type RunnerFailureRule struct {
	// AllowedExitCodes, when non-nil, gates the rule on the exit code.
	AllowedExitCodes []int `json:"allowedExitCodes,omitempty"`
	// FatalSignatures are case-insensitive substrings of a fatal stderr line.
	FatalSignatures []string `json:"fatalSignatures"`
	// InformationalLines are whole stderr lines (case-insensitive) that are never fatal.
	InformationalLines []string `json:"informationalLines,omitempty"`
}

// ConfinedArgv is what a confiner returns for one call: the argv to spawn and
// the facts needed to classify its outcome ([ConfinedArgv.Classify]).
type ConfinedArgv struct {
	// Argv is runner program + profile args + "--" + the caller's exact argv.
	Argv []string `json:"argv"`
	// Backend names the backend that produced Argv (bwrap, landlock, seatbelt, windows-acl, runner-command).
	Backend string `json:"backend"`
	// Enforcement is full or partial.
	Enforcement Enforcement `json:"enforcement"`
	// DenialSignatures is this backend's denial dialect (case-insensitive stderr substrings).
	DenialSignatures []string `json:"denialSignatures"`
	// RunnerFailureRules classify a runner that failed before running the command.
	RunnerFailureRules []RunnerFailureRule `json:"runnerFailureRules"`
	// Ungoverned lists the file effects this backend cannot govern on any
	// kernel, even at full enforcement: its own admission, so a caller (and the
	// escape corpus) knows what goes through. Empty for bwrap. Ours, not
	// upstream's: see [Dialect].
	Ungoverned []string `json:"ungoverned,omitempty"`
	// Isolated lists what the confinement keeps the command from beyond
	// files, each "<effect>: <how>" (effects [IsolatedSignal],
	// [IsolatedAbstractUnix], [IsolatedSecretEnv]): bwrap's PID namespace
	// always, the rest with Config.Harden. Ours, not upstream's; a claim the
	// escape corpus holds every backend to.
	Isolated []string `json:"isolated,omitempty"`
	// ScrubSecrets says the command must start without the environment's
	// secrets ([ScrubSecrets]); package sandbox/spawn applies it. Set by the
	// hardening (Config.Harden).
	ScrubSecrets bool `json:"scrubSecrets,omitempty"`
	// Policy is the policy as granted ([Validate]: checked, workspace root
	// canonical).
	Policy Policy `json:"-"`
	// Fallback, when set, says why the Landlock runner confines this call
	// where the in-process path is the default (a deployment's confiner,
	// package sandbox/chain): the configuration names the runner, or this
	// process cannot apply Landlock itself. Empty for the in-process path
	// and for every other backend. Ours.
	Fallback string `json:"fallback,omitempty"`
	// NoCapabilities says the command starts holding no capability and
	// cannot gain one (every set emptied, no_new_privs), in this process's
	// user namespace: set by the in-process Landlock path. Package
	// sandbox/spawn then skips its sweep after a call that created no
	// process (see its doc, Nothing outlives its call). Ours.
	NoCapabilities bool `json:"-"`
	// Files are the descriptors Argv names by number, bwrap's --bind-fd and
	// --ro-bind-fd operands: the workspace root [Validate] opened and
	// identified (its device and inode are [Policy.WorkspaceID]) and, under
	// the hardening, the workspace's .git opened beneath it, which bwrap
	// mounts where a path would be resolved again. Argv numbers Files[i] as
	// descriptor 4+i for a start that passes none of its own (3 stays
	// closed); whoever starts Argv passes them as [ConfinedArgv.Inherit]
	// says and closes its copies after the start ([ConfinedArgv.Close]).
	// Argv started without them fails: bwrap finds nothing to bind. Ours.
	Files []*os.File `json:"-"`
	// fileArgs are the indexes in Argv of Files' numbers, in order.
	fileArgs []int
	// Start, when set, starts the command itself: the confinement is not in
	// Argv (the command as given) but in how it is started (package
	// sandbox/inproc starts it from a restricted thread). Nil means: start
	// Argv, which wraps the command. A confinement failure at start is a
	// [*UnavailableError]; nothing runs.
	Start func(cmd *exec.Cmd) error `json:"-"`
	// SetsLimits says that Start sets the policy's [Limits] on the command
	// itself (before its first instruction). Package sandbox/spawn refuses a
	// call with limits whose Start does not; without a Start it sets them.
	SetsLimits bool `json:"-"`
}

// Report is the facts of one confined run, the one shape every reader takes
// them in: package sandbox/spawn returns it with each run
// ([ConfinedArgv.Classify] fills it), package render turns it into the model's
// markers, the bash tool into its result value. A nil *Report is a run that
// was not confined (danger-full-access).
type Report struct {
	// Mode is the mode the call actually ran under.
	Mode Mode
	// Backend names the backend that confined the run (see [ConfinedArgv.Backend]).
	Backend string
	// Enforcement is the backend's level; "" when unknown.
	Enforcement Enforcement
	// Ungoverned is what the backend admits it cannot govern (see [Dialect]).
	Ungoverned []string
	// Denied reports that the sandbox blocked a file effect.
	Denied bool
	// RunnerFailed reports that the runner failed before running the
	// command; it takes precedence over Denied.
	RunnerFailed bool
	// Fallback is why the Landlock runner ran where the in-process path is
	// the default (see [ConfinedArgv.Fallback]); "" when the in-process
	// path ran (Backend "landlock-inproc") or the backend has no such
	// choice.
	Fallback string
	// Bound names the limit of the policy ([Limits]) that stopped the
	// command, "" when none did ([Limits.Bound]).
	Bound string
}

// Facts is a [Report] as a tool reports it beside its value
// (pipeline.Output.Sandbox) and the session log repeats it: upstream's
// {mode, denied, enforcement?, runnerFailed?}, then ours: the backend that
// ran and what it admits it cannot govern, so an admitted gap reaches the
// caller and the log, not only the Go API. Backend names the path that ran
// ("landlock-inproc" for the in-process Landlock path, "landlock" for the
// runner), Fallback why the runner ran instead of the in-process path and
// Bound the resource limit that stopped the command.
type Facts struct {
	Mode         Mode        `json:"mode"`
	Denied       bool        `json:"denied"`
	Enforcement  Enforcement `json:"enforcement,omitempty"`
	RunnerFailed bool        `json:"runnerFailed,omitempty"`
	Backend      string      `json:"backend,omitempty"`
	Ungoverned   []string    `json:"ungoverned,omitempty"`
	Fallback     string      `json:"fallback,omitempty"`
	Bound        string      `json:"bound,omitempty"`
}

// Facts returns the report's facts; nil for a nil report.
func (r *Report) Facts() *Facts {
	if r == nil {
		return nil
	}
	return &Facts{Mode: r.Mode, Denied: r.Denied, Enforcement: r.Enforcement, RunnerFailed: r.RunnerFailed,
		Backend: r.Backend, Ungoverned: append([]string(nil), r.Ungoverned...), Fallback: r.Fallback, Bound: r.Bound}
}

// JSON is the facts as JSON (nil for nil facts), for pipeline.Output.Sandbox.
func (f *Facts) JSON() json.RawMessage {
	if f == nil {
		return nil
	}
	b, _ := json.Marshal(f)
	return b
}

// FactsOf parses facts reported as JSON ([Facts.JSON]); nil for none or for
// anything that is not facts.
func FactsOf(raw json.RawMessage) *Facts {
	var f Facts
	if len(raw) == 0 || json.Unmarshal(raw, &f) != nil || f.Mode == "" {
		return nil
	}
	return &f
}

// ErrorCode is the code of [UnavailableError].
const ErrorCode = "SANDBOX_UNAVAILABLE"

// UnavailableError is the fail-closed error: no backend can confine the call,
// or the runner failed before running it. Nothing ran.
type UnavailableError struct {
	// Mode is the confined mode that was requested.
	Mode Mode
	// Detail is the runner failure evidence, if any.
	Detail string
}

// Error returns the VERBATIM upstream message.
func (e *UnavailableError) Error() string {
	msg := fmt.Sprintf("sandbox mode %q is requested but no sandbox backend is usable on this host; refusing to run the command unconfined. Install bubblewrap or run a Landlock-enforcing kernel (Linux), ensure sandbox-exec is usable (macOS), or ensure the ACL restricted-token runner can start (Windows) — otherwise switch the consumer to danger-full-access.", string(e.Mode))
	if e.Detail != "" {
		msg += " Runner failure: " + e.Detail
	}
	return msg
}

// Name returns the error class name, SandboxUnavailableError.
func (e *UnavailableError) Name() string { return "SandboxUnavailableError" }

// Code returns SANDBOX_UNAVAILABLE.
func (e *UnavailableError) Code() string { return ErrorCode }

// --8<-- [start:markers]
// DenialMarker is the VERBATIM line appended to a result the sandbox denied.
func DenialMarker(mode Mode) string {
	return "[sandbox: file access denied under " + string(mode) + " mode]"
}

// EscalationHint is the VERBATIM hint appended after the denial marker when
// escalation is advertised; subject is "command" (bash) or "operation" (fs tools).
func EscalationHint(subject string) string {
	return "[sandbox: escalation available — retry this exact " + subject + " once with sandbox_permissions (the narrowest wider mode that suffices) + justification; the approval prompt asks the user]"
}

// --8<-- [end:markers]

// RunnerFailedMarker is the VERBATIM background-job marker for a runner that failed.
func RunnerFailedMarker(mode Mode) string {
	return "[sandbox: the sandbox runner itself failed under " + string(mode) + " mode — the command did not run; this is a sandbox problem, not a command failure]"
}
