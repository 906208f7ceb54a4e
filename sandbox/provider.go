package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"github.com/dshsim/dshsim/sandbox/internal/seal"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"
)

// ErrBadInput marks a Confine call refused for its input (relative or missing
// workspace root, empty argv, unknown or unconfined mode); nothing ran.
var ErrBadInput = errors.New("sandbox: bad input")

// DefaultProbeTimeout bounds each availability probe.
const DefaultProbeTimeout = 5 * time.Second

// Probes are the availability checks of the backend chain. A nil field uses
// the real default probe (a short real process run under the probe timeout;
// a failed start, a timeout or a non-zero exit means unusable).
type Probes struct {
	// Bwrap reports whether bwrap can confine (default: run
	// bwrap --ro-bind / / --dev /dev --proc /proc --die-with-parent --unshare-pid
	// --cap-drop ALL --remount-ro /proc -- true).
	Bwrap func(ctx context.Context) bool
	// Landlock runs the launcher's probe (default: "<launcher> --probe": exit
	// 0 and stdout exactly the runner's probe line).
	Landlock func(ctx context.Context, launcher string) (Enforcement, bool)
	// Seatbelt reports whether sandbox-exec works (default: sandbox-exec -p
	// <read-only profile> -- true).
	Seatbelt func(ctx context.Context) bool
	// WindowsACL reports whether the ACL runner starts (default: <runner>
	// --workspace <tmp> --temp <tmp> --mode read-only -- cmd /c exit 0; an
	// empty runner is unusable).
	WindowsACL func(ctx context.Context, runner []string) bool
}

// Config configures a [Provider]. The zero value is the real provider of the
// running platform.
type Config struct {
	// Platform selects the chain (GOOS names); default runtime.GOOS.
	Platform string
	// Chain overrides the platform chain (backend names); nil = [Chain](Platform).
	Chain []string
	// LauncherPath is the landlock-run binary; default landlock-run beside
	// the running executable.
	// No environment variable selects it; existence is not checked (the probe says).
	LauncherPath string
	// LandlockABICap, when positive, runs the runner capped at that Landlock
	// ABI (landlock-run --abi-cap N): it governs no more than ABI N's rights,
	// as on an older kernel, and below 5 prints its own partial notice. The
	// availability probe then runs the capped runner on a no-op command (its
	// --probe takes no other flag), also when the chain names landlock alone:
	// the partial notice on stderr means partial enforcement.
	LandlockABICap int
	// WindowsRunner is the ACL runner argv (for example node runner.js);
	// empty means unusable.
	WindowsRunner []string
	// ProbeTimeoutMs bounds each probe in milliseconds; nil = 5000. It must be
	// a positive finite number.
	ProbeTimeoutMs *float64
	// RunnerCommand, when non-empty, skips the chain and every probe: argv =
	// RunnerCommand ++ bwrap profile ++ "--" ++ argv, enforcement full. Trusted.
	RunnerCommand []string
	// RunnerFailureSignatures are the fatal signatures of RunnerCommand's one
	// runner-failure rule; required with RunnerCommand, invalid without it.
	RunnerFailureSignatures []string
	// Probes injects availability checks (tests); nil fields are the real ones.
	Probes Probes
	// TempDir is the process temp dir used by Seatbelt and Windows profiles;
	// default os.TempDir().
	TempDir string
	// LandlockInProcess, when set, is the availability check of the Landlock
	// backend's in-process path (package sandbox/chain sets it; ours): when
	// a probe of the Landlock backend runs, this is asked first, and the
	// backend is usable with its enforcement when it returns no error;
	// otherwise the runner is probed as without it. Confine still wraps
	// argv in the runner: the in-process path is the chain package's.
	LandlockInProcess func() (Enforcement, error)
	// Harden turns on the opt-in hardening (ours, beyond upstream; off by
	// default): Landlock scoping of signals and abstract unix sockets (the
	// runner, and the runner nested inside bwrap; Landlock ABI 6, else the
	// call fails closed) and no secrets in the command's environment. See
	// [IsolatedSignal] and [ScrubSecrets].
	Harden bool
}

// Provider confines argv per call. The backend is selected lazily on the
// first Confine and the verdict, including "unavailable", is cached for the
// provider's lifetime. A Provider is safe for concurrent use.
type Provider struct {
	cfg     Config
	chain   []string
	timeout time.Duration

	mu       sync.Mutex
	selected bool
	backend  string // "" = unavailable
	enf      Enforcement
	probed   []ProbeOutcome
}

// ProbeOutcome is one availability probe the provider ran while selecting
// its backend: the backend and, when it is unusable, why (a probe that fails
// says why: the missing binary, the exit status and first stderr line, the
// timeout, or an answer that is not the runner's probe line).
type ProbeOutcome struct {
	Backend     string
	Enforcement Enforcement // when usable
	Err         error       // nil = usable
}

// DefaultLauncherPath is the launcher a [Config] without LauncherPath uses:
// landlock-run beside the running executable, or, when the executable cannot
// be located, a fixed absolute path that does not exist (so the probe reports
// unusable).
func DefaultLauncherPath() string { return defaultLauncherPath() }

func defaultLauncherPath() string {
	if exe, err := os.Executable(); err == nil {
		return filepath.Join(filepath.Dir(exe), "landlock-run")
	}
	return "/nonexistent/dshsim/bin/landlock-run"
}

// NewProvider validates cfg and returns a provider. Errors (VERBATIM where
// upstream pins them): "sandbox-local: probeTimeoutMs must be a positive
// finite number", "sandbox-local: runnerFailureSignatures requires
// runnerCommand", "sandbox-local: runnerCommand requires at least one
// runnerFailureSignatures entry", "sandbox-local: runnerFailureSignatures
// entries must be non-empty single-line strings"; and ours: an unknown backend
// in Chain, a relative launcher path, or a launcher or runner path that is a
// directory.
func NewProvider(cfg Config) (*Provider, error) {
	p := &Provider{cfg: cfg, timeout: DefaultProbeTimeout}
	if cfg.ProbeTimeoutMs != nil {
		v := *cfg.ProbeTimeoutMs
		if !(v > 0) || math.IsInf(v, 0) {
			return nil, errors.New("sandbox-local: probeTimeoutMs must be a positive finite number")
		}
		p.timeout = time.Duration(v * float64(time.Millisecond))
	}
	if len(cfg.RunnerCommand) == 0 && len(cfg.RunnerFailureSignatures) > 0 {
		return nil, errors.New("sandbox-local: runnerFailureSignatures requires runnerCommand")
	}
	if len(cfg.RunnerCommand) > 0 {
		if len(cfg.RunnerFailureSignatures) == 0 {
			return nil, errors.New("sandbox-local: runnerCommand requires at least one runnerFailureSignatures entry")
		}
		for _, s := range cfg.RunnerFailureSignatures {
			if strings.TrimSpace(s) == "" || strings.ContainsAny(s, "\r\n") {
				return nil, errors.New("sandbox-local: runnerFailureSignatures entries must be non-empty single-line strings")
			}
		}
		if err := notADirectory("runnerCommand", cfg.RunnerCommand[0]); err != nil {
			return nil, err
		}
	}
	if p.cfg.Platform == "" {
		p.cfg.Platform = runtime.GOOS
	}
	if p.cfg.TempDir == "" {
		p.cfg.TempDir = os.TempDir()
	}
	if p.cfg.LauncherPath == "" {
		p.cfg.LauncherPath = defaultLauncherPath()
	}
	if !filepath.IsAbs(p.cfg.LauncherPath) {
		return nil, fmt.Errorf("sandbox-local: launcher path %q must be absolute", p.cfg.LauncherPath)
	}
	if p.cfg.LandlockABICap < 0 {
		return nil, fmt.Errorf("sandbox-local: landlock ABI cap must be positive, got %d", p.cfg.LandlockABICap)
	}
	if err := notADirectory("launcher path", p.cfg.LauncherPath); err != nil {
		return nil, err
	}
	p.chain = cfg.Chain
	if p.chain == nil {
		p.chain = Chain(p.cfg.Platform)
	}
	for _, b := range p.chain {
		if _, ok := DialectOf(b); !ok {
			return nil, fmt.Errorf("sandbox-local: unknown backend %q in chain (want bwrap, landlock, seatbelt or windows-acl)", b)
		}
	}
	return p, nil
}

func notADirectory(what, path string) error {
	if strings.Contains(path, "/") {
		if st, err := os.Stat(path); err == nil && st.IsDir() {
			return fmt.Errorf("sandbox-local: %s %q is a directory, not an executable", what, path)
		}
	}
	return nil
}

// LauncherPath returns the landlock-run path in use.
func (p *Provider) LauncherPath() string { return p.cfg.LauncherPath }

// Selected runs (or reuses) backend selection and returns the backend name
// and its enforcement, or "" when no backend is usable.
func (p *Provider) Selected() (backend string, enf Enforcement) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.selected {
		p.backend, p.enf = p.selectBackend()
		p.selected = true
	}
	return p.backend, p.enf
}

// Probed returns the probes that backend selection ran, in chain order (after
// [Provider.Selected]; empty when the chain has one backend, which is taken
// without a probe, or when selection has not run yet).
func (p *Provider) Probed() []ProbeOutcome {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]ProbeOutcome(nil), p.probed...)
}

func (p *Provider) selectBackend() (string, Enforcement) {
	switch len(p.chain) {
	case 0:
		return "", ""
	case 1:
		b := p.chain[0]
		if b == BackendWindowsACL && len(p.cfg.WindowsRunner) == 0 {
			return "", "" // nothing to run: fail closed rather than emit a broken argv
		}
		if b == BackendLandlock && p.cfg.LandlockABICap > 0 {
			// the enforcement of a capped runner is what it prints, not static
			if enf, ok := p.probeAndRecord(b); ok {
				return b, enf
			}
			return "", ""
		}
		return b, staticEnforcement(b)
	}
	for _, b := range p.chain {
		if enf, ok := p.probeAndRecord(b); ok {
			return b, enf
		}
	}
	return "", ""
}

// probeAndRecord probes b and records the outcome (p.mu is held).
func (p *Provider) probeAndRecord(b string) (Enforcement, bool) {
	enf, err := p.probe(b)
	if errors.Is(err, context.DeadlineExceeded) {
		err = fmt.Errorf("%w (probe timeout %s)", err, p.timeout)
	}
	p.probed = append(p.probed, ProbeOutcome{Backend: b, Enforcement: enf, Err: err})
	return enf, err == nil
}

// errInjectedProbe is the reason of an injected probe ([Probes]) that said
// unusable: the injected function gives no reason of its own.
var errInjectedProbe = errors.New("the injected probe reported it unusable")

// injected turns an injected probe's verdict into the probe's error.
func injected(ok bool) error {
	if ok {
		return nil
	}
	return errInjectedProbe
}

func (p *Provider) probe(b string) (Enforcement, error) {
	// Probes outlive any one caller's context: the verdict is cached.
	ctx, cancel := context.WithTimeout(context.Background(), p.timeout)
	defer cancel()
	pr := p.cfg.Probes
	switch b {
	case BackendBwrap:
		if pr.Bwrap != nil {
			return Full, injected(pr.Bwrap(ctx))
		}
		return Full, CheckBwrap(ctx)
	case BackendLandlock:
		if p.cfg.LandlockInProcess == nil {
			return p.probeRunner(ctx)
		}
		enf, inErr := p.cfg.LandlockInProcess()
		if inErr == nil {
			return enf, nil
		}
		enf, err := p.probeRunner(ctx)
		if err != nil {
			return "", fmt.Errorf("the in-process path: %v; the runner: %w", inErr, err)
		}
		return enf, nil
	case BackendSeatbelt:
		if pr.Seatbelt != nil {
			return Full, injected(pr.Seatbelt(ctx))
		}
		return Full, runProbe(ctx, nil, "sandbox-exec", Wrap(nil, SeatbeltArgs(ReadOnly, nil), []string{"true"})...)
	case BackendWindowsACL:
		if pr.WindowsACL != nil {
			return Partial, injected(pr.WindowsACL(ctx, p.cfg.WindowsRunner))
		}
		if len(p.cfg.WindowsRunner) == 0 {
			return "", errors.New("no ACL runner is configured")
		}
		r := p.cfg.WindowsRunner
		args := Wrap(r[1:], WindowsACLArgs(Policy{Mode: ReadOnly, WorkspaceRoot: p.cfg.TempDir}, p.cfg.TempDir, nil), []string{"cmd", "/c", "exit 0"})
		return Partial, runProbe(ctx, nil, r[0], args...)
	}
	return "", fmt.Errorf("unknown backend %q", b)
}

// probeRunner probes the Landlock runner: the injected probe, or the
// runner's own (--probe; a capped runner on a no-op command).
func (p *Provider) probeRunner(ctx context.Context) (Enforcement, error) {
	if p.cfg.Probes.Landlock != nil {
		enf, ok := p.cfg.Probes.Landlock(ctx, p.cfg.LauncherPath)
		return enf, injected(ok)
	}
	if p.cfg.LandlockABICap > 0 {
		return probeCappedLandlock(ctx, p.landlockRunner())
	}
	return probeLandlock(ctx, p.cfg.LauncherPath)
}

// BwrapProbeArgs is bwrap's availability probe (without the program): the
// read-only profile around true, so the probe checks the flags a real call uses.
func BwrapProbeArgs() []string { return Wrap(nil, BwrapArgs(Policy{Mode: ReadOnly}), []string{"true"}) }

// ProbeBwrap runs "bwrap <BwrapProbeArgs>": exit 0 within ctx means bwrap can
// confine here; a missing binary, a failure or a timeout means it cannot.
func ProbeBwrap(ctx context.Context) bool { return CheckBwrap(ctx) == nil }

// CheckBwrap is [ProbeBwrap] that says why bwrap cannot confine: nil when it
// can, else the missing binary, the exit status with bwrap's first stderr
// line, or the deadline that passed.
func CheckBwrap(ctx context.Context) error { return runProbe(ctx, nil, "bwrap", BwrapProbeArgs()...) }

// probeLandlock runs "<launcher> --probe": exit 0 with stdout exactly the
// runner's one probe line is usable (full, or partial for "landlock:
// partially enforced (older ABI)"); anything else (missing launcher, exit
// 125, timeout, or a program that exits 0 without answering like the runner,
// such as /bin/true, which would "confine" every command by not running it)
// is unusable.
func probeLandlock(ctx context.Context, launcher string) (Enforcement, error) {
	var out bytes.Buffer
	if err := runProbe(ctx, &out, launcher, "--probe"); err != nil {
		return "", err
	}
	switch out.String() {
	case landlockProbePartial + "\n":
		return Partial, nil
	case landlockProbeFull + "\n":
		return Full, nil
	}
	return "", fmt.Errorf("%s --probe exited 0 but printed %q, not the runner's probe line", launcher, firstLine(out.String()))
}

// probeCappedLandlock runs the capped runner on "--ro / -- true": exit 0 is
// usable, partial when the runner printed its partial notice.
func probeCappedLandlock(ctx context.Context, runner []string) (Enforcement, error) {
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, runner[0], append(runner[1:], "--ro", "/", "--", "true")...)
	cmd.Stderr = &stderr
	cmd.WaitDelay = probeWaitDelay(ctx)
	if err := probeError(ctx, cmd.Run(), runner[0], stderr.String()); err != nil {
		return "", err
	}
	for _, line := range strings.Split(stderr.String(), "\n") {
		if line == LandlockPartialNotice {
			return Partial, nil
		}
	}
	return Full, nil
}

// landlockRunner is the runner's argv prefix: the launcher, capped when
// LandlockABICap is set.
func (p *Provider) landlockRunner() []string {
	if p.cfg.LandlockABICap > 0 {
		return []string{p.cfg.LauncherPath, "--abi-cap", strconv.Itoa(p.cfg.LandlockABICap)}
	}
	return []string{p.cfg.LauncherPath}
}

// The runner's probe lines, VERBATIM (package sandbox/landlock declares them
// for the runner; this package does not import the runner's package, and
// TestRunnerVocabulary keeps the two in step).
const (
	landlockProbeFull    = "landlock: fully enforced"
	landlockProbePartial = "landlock: partially enforced (older ABI)"
)

// probeWaitDelay is how long a probe's output may take to arrive after the
// command exited: the rest of the probe's time (at least 100ms). A fixed
// 100ms failed bwrap's probe on a loaded machine ("WaitDelay expired before
// I/O complete": the goroutine copying its stderr was not scheduled in time),
// and the default chain fell through to Landlock.
func probeWaitDelay(ctx context.Context) time.Duration {
	const least = 100 * time.Millisecond
	if d, ok := ctx.Deadline(); ok {
		return max(least, time.Until(d))
	}
	return least
}

// runProbe runs a probe command: nil when it exits 0 within ctx, else why not.
func runProbe(ctx context.Context, stdout *bytes.Buffer, name string, args ...string) error {
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, name, args...)
	if stdout != nil {
		cmd.Stdout = stdout
	}
	cmd.Stderr = &stderr
	cmd.WaitDelay = probeWaitDelay(ctx)
	return probeError(ctx, cmd.Run(), name, stderr.String())
}

// probeError is why a probe command did not pass: its context's deadline
// (checked first: a command killed at the deadline also fails), the error of
// a command that did not start or failed, with its first stderr line; nil
// when it ran and exited 0 in time.
func probeError(ctx context.Context, runErr error, name, stderr string) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("probe %s did not finish in time: %w", name, err)
	}
	if runErr == nil {
		return nil
	}
	if line := firstLine(stderr); line != "" {
		return fmt.Errorf("probe %s: %w: %s", name, runErr, line)
	}
	return fmt.Errorf("probe %s: %w", name, runErr)
}

// firstLine is the first non-empty line of s, trimmed.
func firstLine(s string) string {
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			return l
		}
	}
	return ""
}

// Confine wraps argv for policy: runner + profile args + "--" + argv, with
// the backend's enforcement and classification facts. It never passes argv
// through unconfined: it returns enforcing argv or an error. Errors: ctx
// already done (ctx.Err()); bad input from [Validate] (wrapping
// [ErrBadInput]); [*UnavailableError] when no backend is usable.
func (p *Provider) Confine(ctx context.Context, argv []string, policy Policy) (ConfinedArgv, error) {
	if err := ctx.Err(); err != nil {
		return ConfinedArgv{}, err
	}
	policy, err := Validate(argv, policy)
	if err != nil {
		return ConfinedArgv{}, err
	}
	argv = append([]string(nil), argv...)
	harden := p.cfg.Harden
	if len(p.cfg.RunnerCommand) > 0 {
		return ConfinedArgv{
			Argv:               Wrap(p.cfg.RunnerCommand, BwrapArgs(policy), argv),
			Backend:            BackendRunnerCommand,
			Enforcement:        Full,
			DenialSignatures:   runnerCommandDenials(),
			RunnerFailureRules: []RunnerFailureRule{{FatalSignatures: append([]string(nil), p.cfg.RunnerFailureSignatures...)}},
			Isolated:           Isolation(BackendRunnerCommand, harden),
			ScrubSecrets:       harden,
			Policy:             policy,
		}, nil
	}
	backend, enf := p.Selected()
	if backend == "" {
		return ConfinedArgv{}, &UnavailableError{Mode: policy.Mode}
	}
	d, _ := DialectOf(backend)
	out := ConfinedArgv{Backend: backend, Enforcement: enf, DenialSignatures: d.DenialSignatures, RunnerFailureRules: d.RunnerFailureRules, Ungoverned: d.Ungoverned,
		Isolated: Isolation(backend, harden), ScrubSecrets: harden, Policy: policy}
	if harden {
		out.Ungoverned = append(out.Ungoverned, HardenedUngoverned(backend, policy.Mode)...)
	}
	switch {
	case backend == BackendBwrap && harden:
		// The runner nested inside bwrap fails like the runner.
		ll, _ := DialectOf(BackendLandlock)
		out.RunnerFailureRules = append(out.RunnerFailureRules, ll.RunnerFailureRules...)
		out.Argv = Wrap([]string{"bwrap"}, HardenedBwrapArgs(policy, p.cfg.LauncherPath), argv)
	case backend == BackendBwrap:
		out.Argv = Wrap([]string{"bwrap"}, BwrapArgs(policy), argv)
	case backend == BackendLandlock && harden:
		out.Argv = Wrap(p.landlockRunner(), HardenedLandlockArgs(policy), argv)
	case backend == BackendLandlock:
		out.Argv = Wrap(p.landlockRunner(), LandlockArgs(policy), argv)
	case backend == BackendSeatbelt:
		roots := writableRoots(policy, p.cfg.TempDir, canonicalPath)
		out.Argv = Wrap([]string{"sandbox-exec"}, SeatbeltArgs(policy.Mode, roots), argv)
	case backend == BackendWindowsACL:
		out.Argv = Wrap(p.cfg.WindowsRunner, WindowsACLArgs(policy, p.cfg.TempDir, nil), argv)
	default:
		return ConfinedArgv{}, fmt.Errorf("sandbox: unreachable variant in backend: %q", backend)
	}
	return out, nil
}

// Validate is the one check of a confined call, made by every confiner
// ([Provider.Confine], and package sandbox/inproc) and by nothing else; it
// returns the policy as a backend grants it, with the workspace root
// canonicalised (realpath). In order: a confined mode (a clear error for
// danger-full-access, which never reaches a confiner, and for an unknown
// mode); an absolute workspace root naming an existing directory; a
// non-empty argv; under workspace-write, a root not reached through a
// symlink inside /tmp or the temp dir ([RedirectingSymlink]), a canonical
// root that does not make confinement meaningless ([MeaninglessRoot]: "/",
// a system tree, the home directory or above it), that opens without
// following a symlink at any component (its device and inode are kept in
// [Policy.WorkspaceID], which the Landlock backends pin), and that holds no
// mount the grant would widen to ([MountedRoot]). Errors wrap
// [ErrBadInput].
func Validate(argv []string, policy Policy) (Policy, error) {
	if policy.Mode == DangerFullAccess {
		return Policy{}, fmt.Errorf("%w: mode danger-full-access never reaches a provider; the consumer runs the command unconfined", ErrBadInput)
	}
	if !policy.Mode.Confined() {
		_, err := ParseMode(string(policy.Mode))
		return Policy{}, fmt.Errorf("%w: %v", ErrBadInput, err)
	}
	if !filepath.IsAbs(policy.WorkspaceRoot) {
		return Policy{}, fmt.Errorf("%w: workspace root %q is not an absolute path", ErrBadInput, policy.WorkspaceRoot)
	}
	st, err := os.Stat(policy.WorkspaceRoot)
	if err != nil {
		return Policy{}, fmt.Errorf("%w: workspace root %q does not exist", ErrBadInput, policy.WorkspaceRoot)
	}
	if !st.IsDir() {
		return Policy{}, fmt.Errorf("%w: workspace root %q is not a directory", ErrBadInput, policy.WorkspaceRoot)
	}
	if len(argv) == 0 {
		return Policy{}, fmt.Errorf("%w: confine needs a command: argv is empty", ErrBadInput)
	}
	if policy.Mode != WorkspaceWrite {
		policy.WorkspaceRoot = canonicalPath(policy.WorkspaceRoot)
		return policy, nil
	}
	return validateWritableRoot(policy)
}

// validateWritableRoot is [Validate]'s part for a workspace-write root:
// resolved in one walk through descriptors that refuses a symlink inside a
// temp area ([RedirectingSymlink]'s rule) and yields the canonical path and
// the device and inode of the directory it reached (kept in the policy for
// the Landlock backends to pin), not meaningless ([MeaninglessRoot]), and
// with no mount that widens the grant ([MountedRoot]).
func validateWritableRoot(policy Policy) (Policy, error) {
	// A path without a symlink resolves in one open, and the temp areas,
	// which only judge a symlink met, are not needed.
	root, id, plain := resolvePlain(policy.WorkspaceRoot)
	var err error
	if !plain {
		root, id, err = resolveRoot(policy.WorkspaceRoot, tempAreas())
	}
	if link, bad := isRedirect(err); bad {
		return Policy{}, fmt.Errorf("%w: workspace root %s passes through the symlink %s inside a temp area that confined commands can write; it may have been redirected by an earlier command, so it is not granted", ErrBadInput, policy.WorkspaceRoot, link)
	}
	if err != nil {
		return Policy{}, fmt.Errorf("%w: workspace root %s cannot be resolved (%v): a command may have moved or swapped it since it was named, so it is not granted", ErrBadInput, policy.WorkspaceRoot, err)
	}
	policy.WorkspaceRoot, policy.WorkspaceID = root, id
	home := homeDir()
	if why, bad := MeaninglessRoot(root, home); bad {
		return Policy{}, notGranted(root, why)
	}
	mounts, err := mountTable()
	if err != nil {
		return Policy{}, fmt.Errorf("%w: the mount table, which tells whether workspace root %s holds a mount the grant would widen to, cannot be read (%v); not granted", ErrBadInput, policy.WorkspaceRoot, err)
	}
	if why, bad := MountedRoot(policy.WorkspaceRoot, mounts, home); bad {
		return Policy{}, notGranted(policy.WorkspaceRoot, why)
	}
	return policy, nil
}

// notGranted is the refusal of a workspace-write root, with why.
func notGranted(root, why string) error {
	return fmt.Errorf("%w: workspace root %s is not granted for workspace-write: %s; a confined command could write there as if unconfined. Use a project directory as the workspace", ErrBadInput, root, why)
}

// Sealed makes Provider a spawn.Confiner (the interface is closed to the sandbox tree).
func (*Provider) Sealed(seal.Token) {}
