package escape

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"

	"github.com/dshsim/dshsim/sandbox"
	"github.com/dshsim/dshsim/sandbox/chain"
	"github.com/dshsim/dshsim/sandbox/inproc"
	"github.com/dshsim/dshsim/sandbox/spawn"
)

// Backend is one way to confine a command, as a column of the result table.
type Backend struct {
	// Name is the column name: "bwrap", "landlock", "landlock-inproc",
	// "landlock@abi3", with "+harden" for the opt-in hardening.
	Name string
	// Confiner confines each attempt; the corpus runs it through spawn, the
	// executor every caller uses.
	Confiner spawn.Confiner
	// Report is what the backend reported about itself.
	Report Report
	// Modes are the modes it runs in; nil is [Modes] (the unconfined
	// backend runs in danger-full-access only).
	Modes []sandbox.Mode
	// close releases what the backend holds (the in-process launcher).
	close func()
}

// Close releases what the backend holds.
func (b Backend) Close() {
	if b.close != nil {
		b.close()
	}
}

// Env is what building the backends needs.
type Env struct {
	// Runner is the landlock-run binary; Probe the escape-probe binary.
	Runner, Probe string
	// KernelABI is the running kernel's Landlock ABI.
	KernelABI int
	// Base is a scratch directory outside /tmp the identity can write.
	Base string
	// Transcripts is the directory of the upstream recordings the hostile
	// recordings are made from, readable by every identity.
	Transcripts string `json:",omitempty"`
}

// HardenSuffix marks a backend with the opt-in hardening on.
const HardenSuffix = "+harden"

// MainBackends are the backends of the main table: bwrap, the Landlock
// runner and the in-process path, each through the real sandbox.
var MainBackends = []string{sandbox.BackendBwrap, sandbox.BackendLandlock, inproc.Backend}

// HardeningBackends are the columns of the hardening table: each main
// backend with the opt-in hardening (the main table has them without).
var HardeningBackends = []string{sandbox.BackendBwrap + HardenSuffix, sandbox.BackendLandlock + HardenSuffix, inproc.Backend + HardenSuffix}

// CappedBackends are the runner capped at ABI 1..5, then the stack's
// default Landlock path (in-process) capped the same. A cap of 6 or 7
// builds the very ruleset of 5 (no filesystem right is newer than ABI 5,
// see landlock.MaxABI), which the main table's Landlock columns already
// run.
func CappedBackends() []string {
	var out []string
	for _, b := range []string{sandbox.BackendLandlock, inproc.Backend} {
		for n := 1; n <= 5; n++ {
			out = append(out, fmt.Sprintf("%s@abi%d", b, n))
		}
	}
	return out
}

// NewBackends builds the named backends (see [NewBackend]); on error the
// ones built are closed.
func NewBackends(ctx context.Context, env Env, names []string) ([]Backend, error) {
	var out []Backend
	for _, n := range names {
		b, err := NewBackend(ctx, env, n)
		if err != nil {
			for _, o := range out {
				o.Close()
			}
			return nil, err
		}
		out = append(out, b)
	}
	return out, nil
}

// NewBackend builds one backend by its column name: bwrap and landlock are
// the real sandbox.Provider restricted to that backend (Landlock selected by
// probing the runner, as on a host without bwrap); landlock-inproc is the
// stack's default Landlock path (package sandbox/chain on a host without
// bwrap: in-process, threads reused); landlock@abiN is the real provider with the runner
// capped at ABI N (--abi-cap N); a "+harden" suffix turns on the opt-in
// hardening; unconfined ([Unconfined]) confines nothing and runs in
// danger-full-access; dsh-replay ([Replayed]) is the contained replay of
// the hostile recordings.
func NewBackend(ctx context.Context, env Env, name string) (Backend, error) {
	base, harden := strings.CutSuffix(name, HardenSuffix)
	var b Backend
	var err error
	switch {
	case base == sandbox.BackendBwrap:
		b, err = providerBackend(ctx, name, base, sandbox.Config{Chain: []string{sandbox.BackendBwrap}, LauncherPath: env.Runner, Harden: harden}, env.Base)
		b.Report.TempArea = TempFresh
	case base == sandbox.BackendLandlock:
		cfg := sandbox.Config{LauncherPath: env.Runner, Chain: []string{sandbox.BackendBwrap, sandbox.BackendLandlock}, Harden: harden,
			Probes: sandbox.Probes{Bwrap: func(context.Context) bool { return false }}}
		b, err = providerBackend(ctx, name, base, cfg, env.Base)
		b.Report.TempArea, b.Report.ABI = TempHost, min(env.KernelABI, 5)
		b.Report.Probe = probeLine(ctx, env.Runner)
	case base == inproc.Backend:
		b, err = inProcessBackend(ctx, name, env, harden)
	case name == Unconfined:
		b = Backend{Name: Unconfined, Modes: []sandbox.Mode{sandbox.DangerFullAccess}, Report: Report{TempArea: "none (nothing is confined)"}}
	case name == Replayed:
		b = replayBackend()
	case strings.HasPrefix(base, inproc.Backend+"@abi") && !harden:
		n, aerr := strconv.Atoi(strings.TrimPrefix(base, inproc.Backend+"@abi"))
		if aerr != nil || n < 1 {
			return Backend{}, fmt.Errorf("backend %q: want %s@abiN with N >= 1", name, inproc.Backend)
		}
		b, err = inProcessCapped(ctx, env, n)
	case strings.HasPrefix(base, sandbox.BackendLandlock+"@abi") && !harden:
		n, aerr := strconv.Atoi(strings.TrimPrefix(base, sandbox.BackendLandlock+"@abi"))
		if aerr != nil || n < 1 {
			return Backend{}, fmt.Errorf("backend %q: want landlock@abiN with N >= 1", name)
		}
		b, err = landlockCapped(ctx, env, n)
	default:
		return Backend{}, fmt.Errorf("unknown backend %q (want bwrap, landlock, %s, landlock@abiN or %s@abiN, optionally with %s, %s or %s)", name, inproc.Backend, inproc.Backend, HardenSuffix, Unconfined, Replayed)
	}
	if err != nil {
		return Backend{}, fmt.Errorf("%s: %w", name, err)
	}
	return b, nil
}

// reportOf is what a confiner says about itself when it confines a first
// command under workspace-write, the mode whose report says the most
// (selection is lazy: that also selects and probes the backend).
func reportOf(ctx context.Context, c spawn.Confiner, probeWS string) (Report, sandbox.ConfinedArgv, error) {
	ws, err := os.MkdirTemp(probeWS, "probe-ws-") // a project directory: probeWS may be the identity's home
	if err != nil {
		return Report{}, sandbox.ConfinedArgv{}, err
	}
	defer os.Remove(ws)
	first, err := c.Confine(ctx, []string{"true"}, sandbox.Policy{Mode: sandbox.WorkspaceWrite, WorkspaceRoot: ws})
	if err != nil {
		return Report{}, first, err
	}
	return Report{Enforcement: first.Enforcement, Ungoverned: first.Ungoverned, Isolated: first.Isolated}, first, nil
}

// providerBackend is the real provider configured by cfg, named name as a
// column; it must select backend.
func providerBackend(ctx context.Context, name, backend string, cfg sandbox.Config, probeWS string) (Backend, error) {
	p, err := sandbox.NewProvider(cfg)
	if err != nil {
		return Backend{}, err
	}
	r, first, err := reportOf(ctx, p, probeWS)
	if err != nil {
		return Backend{}, err
	}
	if first.Backend != backend {
		return Backend{}, fmt.Errorf("provider selected %q, want %q", first.Backend, backend)
	}
	return Backend{Name: name, Confiner: p, Report: r}, nil
}

// inProcessBackend is the stack's default Landlock path on a host without
// bwrap: package sandbox/chain over the platform chain with bwrap's probe
// failing, which selects Landlock and applies it in this process (threads
// reused per policy), the runner its fallback. A fallback is an error here:
// the column must be the in-process path.
func inProcessBackend(ctx context.Context, name string, env Env, harden bool) (Backend, error) {
	return defaultPath(ctx, name, env, sandbox.Config{Harden: harden})
}

// inProcessCapped is the stack's default Landlock path capped at ABI n
// (sandbox.Config.LandlockABICap, inproc.Options.ABICap): below 5 it
// prints the runner's partial notice, as the runner does.
func inProcessCapped(ctx context.Context, env Env, n int) (Backend, error) {
	b, err := defaultPath(ctx, fmt.Sprintf("%s@abi%d", inproc.Backend, n), env, sandbox.Config{LandlockABICap: n})
	b.Report.ABI = min(env.KernelABI, n, 5)
	return b, err
}

// defaultPath is package sandbox/chain configured by cfg over the platform
// chain with bwrap's probe failing, as on a host without bwrap: Landlock in
// this process, threads reused. A fallback to the runner is an error here.
func defaultPath(ctx context.Context, name string, env Env, cfg sandbox.Config) (Backend, error) {
	cfg.LauncherPath, cfg.Chain = env.Runner, []string{sandbox.BackendBwrap, sandbox.BackendLandlock}
	cfg.Probes = sandbox.Probes{Bwrap: func(context.Context) bool { return false }}
	c, err := chain.New(chain.Config{Sandbox: cfg})
	if err != nil {
		return Backend{}, err
	}
	r, first, err := reportOf(ctx, c, env.Base)
	if err == nil && (first.Backend != inproc.Backend || first.Fallback != "") {
		err = fmt.Errorf("the default path selected %q (fallback %q), want %q", first.Backend, first.Fallback, inproc.Backend)
	}
	if err != nil {
		c.Close()
		return Backend{}, err
	}
	r.TempArea, r.ABI = TempHost, min(env.KernelABI, 5)
	return Backend{Name: name, Confiner: c, Report: r, close: func() { c.Close() }}, nil
}

// landlockCapped is the real provider restricted to the Landlock runner
// capped with --abi-cap n (sandbox.Config.LandlockABICap). The runner's
// --probe takes no other flags, so the provider's probe runs the capped
// runner on a no-op command: the partial notice on stderr means partial,
// none full.
func landlockCapped(ctx context.Context, env Env, n int) (Backend, error) {
	cfg := sandbox.Config{Chain: []string{sandbox.BackendLandlock}, LauncherPath: env.Runner, LandlockABICap: n}
	b, err := providerBackend(ctx, fmt.Sprintf("landlock@abi%d", n), sandbox.BackendLandlock, cfg, env.Base)
	if err != nil {
		return Backend{}, err
	}
	b.Report.Probe, b.Report.ABI, b.Report.TempArea = "(capped run; --probe takes no flags)", min(env.KernelABI, n, 5), TempHost
	return b, nil
}

// LandlockNotice is the runner's VERBATIM partial-enforcement line.
const LandlockNotice = sandbox.LandlockPartialNotice

func probeLine(ctx context.Context, runner string) string {
	out, _ := exec.CommandContext(ctx, runner, "--probe").Output()
	return strings.TrimSpace(string(out))
}

func hasLine(s, line string) bool {
	for _, l := range strings.Split(s, "\n") {
		if strings.EqualFold(strings.TrimRight(l, "\r"), line) {
			return true
		}
	}
	return false
}

// KernelABI asks the runner for the kernel's ABI (`runner --abi`).
func KernelABI(ctx context.Context, runner string) (int, error) {
	out, err := exec.CommandContext(ctx, runner, "--abi").Output()
	if err != nil {
		return 0, fmt.Errorf("%s --abi: %w", runner, err)
	}
	s := strings.TrimSpace(string(out))
	n, err := strconv.Atoi(strings.TrimPrefix(s, "landlock: kernel ABI "))
	if err != nil {
		return 0, fmt.Errorf("%s --abi: unexpected output %q", runner, s)
	}
	return n, nil
}
