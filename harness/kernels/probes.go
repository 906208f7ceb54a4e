package kernels

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/dshsim/dshsim/harness/escape"
	"github.com/dshsim/dshsim/sandbox"
	"github.com/dshsim/dshsim/sandbox/spawn"
)

// Where says where a probe's effect lands, and so whether workspace-write permits it.
type Where string

// Effect locations.
const (
	// InWorkspace effects are permitted by workspace-write.
	InWorkspace Where = "ws"
	// Outside effects are forbidden by workspace-write.
	Outside Where = "out"
	// Device effects are not promised either way (package sandbox, Modes
	// and promises); the cell
	// records whether the ioctl reached the driver.
	Device Where = "dev"
)

// Probe is one operation run by escape-probe under the Landlock runner with a
// workspace-write policy (workspace <base>/ws; outside <base>/out).
type Probe struct {
	// Name is the row name.
	Name string
	// Args are escape-probe arguments; {ws} and {out} are replaced.
	Args []string
	// Where the effect lands.
	Where Where
	// Right is the Landlock right that governs it and the ABI that added it
	// ("" = ABI 1), used to admit a gap under a partial report.
	Right string
	// Since is the ABI that added Right (1 for the basic rights).
	Since int
	// Effect is the key of the backend's Ungoverned list for a right no ABI
	// has ("chmod").
	Effect string
}

// Probes are the layer-1 and layer-2 probes, in row order.
var Probes = []Probe{
	{Name: "write-inside", Args: []string{"write", "{ws}/new"}, Where: InWorkspace, Since: 1},
	{Name: "write-outside", Args: []string{"write", "{out}/new"}, Where: Outside, Since: 1},
	{Name: "append-outside", Args: []string{"append", "{out}/target"}, Where: Outside, Since: 1},
	{Name: "truncate-outside", Args: []string{"truncate", "{out}/target"}, Where: Outside, Right: "truncate", Since: 3},
	{Name: "truncate-inside", Args: []string{"truncate", "{ws}/f"}, Where: InWorkspace, Right: "truncate", Since: 3},
	{Name: "rename-across-inside", Args: []string{"rename", "{ws}/a/f", "{ws}/b/f"}, Where: InWorkspace, Right: "refer", Since: 2},
	{Name: "link-across-inside", Args: []string{"link", "{ws}/a/f", "{ws}/b/g"}, Where: InWorkspace, Right: "refer", Since: 2},
	{Name: "rename-out", Args: []string{"rename", "{ws}/f", "{out}/moved"}, Where: Outside, Since: 1},
	{Name: "hardlink-out", Args: []string{"link", "{ws}/f", "{out}/linked"}, Where: Outside, Since: 1},
	{Name: "mkfifo-outside", Args: []string{"mkfifo", "{out}/fifo"}, Where: Outside, Since: 1},
	{Name: "unlink-outside", Args: []string{"unlink", "{out}/target"}, Where: Outside, Since: 1},
	{Name: "reexec-write-outside", Args: []string{"reexec", "2", "{out}/target"}, Where: Outside, Since: 1},
	{Name: "chmod-outside", Args: []string{"chmod", "{out}/target"}, Where: Outside, Right: "metadata", Since: 0, Effect: "chmod"},
	{Name: "device-ioctl", Args: []string{"ioctl", "/dev/zero"}, Where: Device, Right: "ioctl", Since: 5},
}

// Cell values.
const (
	// CellOK: a permitted effect happened.
	CellOK = "ok"
	// CellDenied: a forbidden effect was blocked.
	CellDenied = "denied"
	// CellGap: a forbidden effect happened.
	CellGap = "GAP"
	// CellRefused: a permitted effect was refused (the REFER trap before ABI 2).
	CellRefused = "refused"
	// CellRunnerFailed: the runner exited 125 with a fatal line; nothing ran.
	CellRunnerFailed = "125"
	// CellReached / CellBlocked: the device ioctl reached the driver or was blocked.
	CellReached = "reached"
	CellBlocked = "blocked"
)

// ProbeResult is one probe run.
type ProbeResult struct {
	Name    string
	Exit    int
	Changed bool
	Stdout  string
	Stderr  string
}

// Env is where probes run.
type Env struct {
	// Runner is the landlock-run binary, Probe the escape-probe binary.
	Runner, Probe string
	// Base is a scratch directory outside /tmp.
	Base string
	// Cap is the --abi-cap value (0 = none).
	Cap int
}

func expand(args []string, ws, out string) []string {
	r := strings.NewReplacer("{ws}", ws, "{out}", out)
	o := make([]string, len(args))
	for i, a := range args {
		o[i] = r.Replace(a)
	}
	return o
}

// RunProbes runs every probe in a fresh layout under env.Base, under the
// runner, or through spawn confined by c (the default Landlock path) when
// it is not nil.
func RunProbes(ctx context.Context, env Env, c spawn.Confiner) ([]ProbeResult, error) {
	var out []ProbeResult
	for i, p := range Probes {
		r, err := runProbe(ctx, env, p, filepath.Join(env.Base, fmt.Sprintf("p%d", i)), c)
		if err != nil {
			return out, fmt.Errorf("probe %s: %w", p.Name, err)
		}
		out = append(out, r)
	}
	return out, nil
}

func runProbe(ctx context.Context, env Env, p Probe, dir string, c spawn.Confiner) (ProbeResult, error) {
	ws, outside := filepath.Join(dir, "ws"), filepath.Join(dir, "out")
	for _, d := range []string{filepath.Join(ws, "a"), filepath.Join(ws, "b"), outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return ProbeResult{}, err
		}
	}
	for p, c := range map[string]string{filepath.Join(ws, "a", "f"): "a\n", filepath.Join(ws, "f"): "f\n", filepath.Join(outside, "target"): "original\n"} {
		if err := os.WriteFile(p, []byte(c), 0o644); err != nil {
			return ProbeResult{}, err
		}
	}
	defer os.RemoveAll(dir)
	roots := map[string]string{"ws": ws, "out": outside}
	before, err := escape.Take(roots, nil)
	if err != nil {
		return ProbeResult{}, err
	}
	probe := append([]string{env.Probe}, expand(p.Args, ws, outside)...)
	var res ProbeResult
	if c != nil {
		res = confined(ctx, c, ws, probe)
	} else {
		argv := []string{env.Runner}
		if env.Cap > 0 {
			argv = append(argv, "--abi-cap", strconv.Itoa(env.Cap))
		}
		argv = append(argv, sandbox.LandlockArgs(sandbox.Policy{Mode: sandbox.WorkspaceWrite, WorkspaceRoot: ws})...)
		argv = append(append(argv, "--"), probe...)
		cctx, cancel := context.WithTimeout(ctx, 2*recordTimeout)
		defer cancel()
		cmd := exec.CommandContext(cctx, argv[0], argv[1:]...)
		cmd.Dir = ws
		var so, se bytes.Buffer
		cmd.Stdout, cmd.Stderr = &so, &se
		err = cmd.Run()
		res = ProbeResult{Stdout: strings.TrimSpace(so.String()), Stderr: strings.TrimSpace(se.String())}
		var ee *exec.ExitError
		switch {
		case err == nil:
		case errors.As(err, &ee):
			res.Exit = ee.ExitCode()
		default:
			return res, err
		}
	}
	res.Name = p.Name
	after, err := escape.Take(roots, nil)
	if err != nil {
		return res, err
	}
	for _, c := range escape.Diff(before, after) {
		if strings.HasPrefix(c.Path, string(p.Where)) {
			res.Changed = true
		}
	}
	return res, nil
}

// confined runs argv confined by c through spawn, with the probe's
// workspace-write policy. A start that fails (the launcher could not
// restrict its thread, no backend) is a result with exit -1 and the error,
// which Check reports; nothing ran.
func confined(ctx context.Context, c spawn.Confiner, ws string, argv []string) ProbeResult {
	res, err := spawn.Run(ctx, spawn.Request{Argv: argv, Policy: sandbox.Policy{Mode: sandbox.WorkspaceWrite, WorkspaceRoot: ws},
		Confiner: c, Dir: ws, Timeout: 2 * recordTimeout})
	if err != nil && res.Sandbox == nil {
		return ProbeResult{Exit: -1, Stderr: "in-process start failed: " + err.Error()}
	}
	return ProbeResult{Exit: res.ExitCode, Stdout: strings.TrimSpace(res.Stdout.Text), Stderr: strings.TrimSpace(res.Stderr.Text)}
}

// Cell is the verdict of one probe result: pure.
func Cell(p Probe, r ProbeResult) string {
	if _, failed := sandbox.ClassifyRunnerFailure(r.Exit, false, r.Stderr, []sandbox.RunnerFailureRule{{AllowedExitCodes: []int{125},
		FatalSignatures: []string{"landlock-run: "}, InformationalLines: []string{sandbox.LandlockPartialNotice}}}); failed {
		if r.Changed {
			return CellGap
		}
		return CellRunnerFailed
	}
	switch p.Where {
	case InWorkspace:
		if r.Changed {
			return CellOK
		}
		return CellRefused
	case Outside:
		if r.Changed {
			return CellGap
		}
		return CellDenied
	default:
		if r.Exit == 0 {
			return CellReached
		}
		return CellBlocked
	}
}

// Errno is the errno name a probe printed ("EXDEV"), or "".
func Errno(r ProbeResult) string {
	_, after, ok := strings.Cut(r.Stdout, ": ")
	if !ok || after == "ok" {
		return ""
	}
	name, _, _ := strings.Cut(after, " ")
	return name
}
