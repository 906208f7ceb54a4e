package escape

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/dshsim/dshsim/sandbox"
)

// Backend is one way to confine a command, as a column of the result table.
type Backend struct {
	// Name is the column name: "bwrap", "landlock", "landlock@abi3".
	Name string
	// Confine wraps argv for mode and workspace ws.
	Confine func(ctx context.Context, mode sandbox.Mode, ws string, argv []string) (sandbox.ConfinedArgv, error)
	// Report is what the backend reported about itself.
	Report Report
}

// LandlockNotice is the runner's VERBATIM partial-enforcement line.
const LandlockNotice = sandbox.LandlockPartialNotice

func providerBackend(ctx context.Context, name string, cfg sandbox.Config, probeWS string) (Backend, error) {
	p, err := sandbox.NewProvider(cfg)
	if err != nil {
		return Backend{}, err
	}
	// Selection is lazy: one Confine selects (and probes) the backend.
	first, err := p.Confine(ctx, []string{"true"}, sandbox.Policy{Mode: sandbox.ReadOnly, WorkspaceRoot: probeWS})
	if err != nil {
		return Backend{}, fmt.Errorf("%s: %w", name, err)
	}
	sel, enf := p.Selected()
	if sel != name {
		return Backend{}, fmt.Errorf("provider selected %q, want %q", sel, name)
	}
	return Backend{
		Name: name,
		Confine: func(ctx context.Context, mode sandbox.Mode, ws string, argv []string) (sandbox.ConfinedArgv, error) {
			return p.Confine(ctx, argv, sandbox.Policy{Mode: mode, WorkspaceRoot: ws})
		},
		Report: Report{Enforcement: enf, Ungoverned: first.Ungoverned},
	}, nil
}

// Bwrap is the real provider restricted to its bwrap backend (a sole
// candidate, selected as the provider does). ws is any existing directory.
func Bwrap(ctx context.Context, ws string) (Backend, error) {
	b, err := providerBackend(ctx, sandbox.BackendBwrap, sandbox.Config{Chain: []string{sandbox.BackendBwrap}}, ws)
	b.Report.TempArea = TempFresh
	return b, err
}

// Landlock is the real provider with bwrap reported unusable, so it probes
// and selects the Landlock runner at path runner, exactly as on a host
// without bwrap. kernelABI is the running kernel's ABI.
func Landlock(ctx context.Context, runner string, kernelABI int, ws string) (Backend, error) {
	cfg := sandbox.Config{LauncherPath: runner, Chain: []string{sandbox.BackendBwrap, sandbox.BackendLandlock},
		Probes: sandbox.Probes{Bwrap: func(context.Context) bool { return false }}}
	b, err := providerBackend(ctx, sandbox.BackendLandlock, cfg, ws)
	if err != nil {
		return b, err
	}
	b.Report.TempArea, b.Report.ABI = TempHost, min(kernelABI, 5)
	b.Report.Probe = probeLine(ctx, runner)
	return b, nil
}

func probeLine(ctx context.Context, runner string) string {
	out, _ := exec.CommandContext(ctx, runner, "--probe").Output()
	return strings.TrimSpace(string(out))
}

// LandlockCapped runs the runner with --abi-cap n. The runner's --probe takes
// no other flags, so the report of a capped runner is what it prints when it
// runs a command: the partial notice on stderr (partial) or nothing (full).
func LandlockCapped(ctx context.Context, runner string, kernelABI, n int) (Backend, error) {
	ctx2, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx2, runner, "--abi-cap", strconv.Itoa(n), "--ro", "/", "--", "true")
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return Backend{}, fmt.Errorf("%s --abi-cap %d: %v: %s", runner, n, err, strings.TrimSpace(stderr.String()))
	}
	enf := sandbox.Full
	if hasLine(stderr.String(), LandlockNotice) {
		enf = sandbox.Partial
	}
	name := fmt.Sprintf("landlock@abi%d", n)
	d, _ := sandbox.DialectOf(sandbox.BackendLandlock)
	return Backend{
		Name: name,
		Confine: func(_ context.Context, mode sandbox.Mode, ws string, argv []string) (sandbox.ConfinedArgv, error) {
			full := append([]string{runner, "--abi-cap", strconv.Itoa(n)}, sandbox.LandlockArgs(sandbox.Policy{Mode: mode, WorkspaceRoot: ws})...)
			full = append(append(full, "--"), argv...)
			return sandbox.ConfinedArgv{Argv: full, Backend: sandbox.BackendLandlock, Enforcement: enf,
				DenialSignatures: d.DenialSignatures, RunnerFailureRules: d.RunnerFailureRules, Ungoverned: d.Ungoverned}, nil
		},
		Report: Report{Enforcement: enf, Probe: "(capped run; --probe takes no flags)", ABI: min(kernelABI, n, 5), TempArea: TempHost, Ungoverned: d.Ungoverned},
	}, nil
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
