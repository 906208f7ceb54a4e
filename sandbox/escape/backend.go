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
	Confine func(mode sandbox.Mode, ws string, argv []string) (sandbox.ConfinedArgv, error)
	// Report is what the backend reported about itself (from its probe).
	Report Report
}

// BwrapArgv is the bwrap profile of sandbox-escalation.md §3.
func BwrapArgv(mode sandbox.Mode, ws string, argv []string) []string {
	out := []string{"bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--die-with-parent"}
	if mode == sandbox.WorkspaceWrite {
		out = append(out, "--tmpfs", "/tmp", "--bind", ws, ws)
	}
	return append(append(out, "--"), argv...)
}

// LandlockArgv is the Landlock profile of sandbox-escalation.md §3, with
// extra runner flags (such as an ABI cap) placed before the grants.
func LandlockArgv(runner string, extra []string, mode sandbox.Mode, ws string, argv []string) []string {
	out := append([]string{runner}, extra...)
	out = append(out, "--ro", "/", "--rw", "/dev/null")
	if mode == sandbox.WorkspaceWrite {
		out = append(out, "--rw", "/tmp", "--rw", ws)
	}
	return append(append(out, "--"), argv...)
}

// LandlockNotice is the runner's VERBATIM partial-enforcement line.
const LandlockNotice = "landlock-run: partial enforcement (older Landlock ABI)"

// Bwrap probes bwrap as the provider does (sandbox-escalation.md §2) and
// returns the backend, or an error when bwrap is unusable.
func Bwrap(ctx context.Context) (Backend, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--die-with-parent", "--", "true")
	if out, err := cmd.CombinedOutput(); err != nil {
		return Backend{}, fmt.Errorf("bwrap probe: %v: %s", err, bytes.TrimSpace(out))
	}
	return Backend{
		Name: "bwrap",
		Confine: func(mode sandbox.Mode, ws string, argv []string) (sandbox.ConfinedArgv, error) {
			return sandbox.ConfinedArgv{Argv: BwrapArgv(mode, ws, argv), Backend: "bwrap", Enforcement: sandbox.Full,
				DenialSignatures:   []string{"read-only file system"},
				RunnerFailureRules: []sandbox.RunnerFailureRule{{FatalSignatures: []string{"bwrap: "}}}}, nil
		},
		Report: Report{Enforcement: sandbox.Full, TempArea: TempFresh},
	}, nil
}

// Landlock probes the runner (`runner [extra...] --probe`) and returns the
// backend. kernelABI is the running kernel's Landlock ABI and cap the cap the
// extra flags impose (0 = none); the governed ABI is the smaller.
func Landlock(ctx context.Context, name, runner string, extra []string, kernelABI, cap int) (Backend, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, runner, append(append([]string{}, extra...), "--probe")...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return Backend{}, fmt.Errorf("%s --probe: %v: %s", runner, err, strings.TrimSpace(stderr.String()))
	}
	line := strings.TrimSpace(stdout.String())
	enf := sandbox.Full
	if strings.Contains(line, "partially enforced") {
		enf = sandbox.Partial
	}
	abi := kernelABI
	if cap > 0 && cap < abi {
		abi = cap
	}
	return Backend{
		Name: name,
		Confine: func(mode sandbox.Mode, ws string, argv []string) (sandbox.ConfinedArgv, error) {
			return sandbox.ConfinedArgv{Argv: LandlockArgv(runner, extra, mode, ws, argv), Backend: "landlock", Enforcement: enf,
				DenialSignatures: []string{"permission denied"},
				RunnerFailureRules: []sandbox.RunnerFailureRule{{AllowedExitCodes: []int{125},
					FatalSignatures: []string{"landlock-run: "}, InformationalLines: []string{LandlockNotice}}}}, nil
		},
		Report: Report{Enforcement: enf, Probe: line, ABI: abi, TempArea: TempHost},
	}, nil
}

// CapFlags returns the runner flags that cap the ABI at n, given the flag
// spelling (e.g. "--abi-cap").
func CapFlags(flag string, n int) []string { return []string{flag, strconv.Itoa(n)} }
