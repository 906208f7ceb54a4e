package kernels

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/dshsim/dshsim/sandbox"
)

// Column is one configuration of the matrix: a capped ABI on this machine
// (layer 1), this machine uncapped, or a real kernel under qemu (layer 2).
type Column struct {
	// Name is the short column header ("cap1", "host", "5.10").
	Name string
	// Layer is 1 (this machine) or 2 (qemu).
	Layer int
	// Cap is the --abi-cap value (0 = none).
	Cap int
	// CPUs is the guest's virtual CPU count (layer 2).
	CPUs int
	// Guest is what the agent reported.
	Guest Guest
}

// KernelABI is the ABI from the runner's --abi record, 0 when it failed.
func (c Column) KernelABI() int {
	if c.Guest.ABI.Exit != 0 {
		return 0
	}
	n, err := strconv.Atoi(strings.TrimPrefix(c.Guest.ABI.Stdout, "landlock: kernel ABI "))
	if err != nil {
		return 0
	}
	return n
}

// Governed is the ABI whose rights the runner governs: min(kernel, cap, 5).
func (c Column) Governed() int {
	n := min(c.KernelABI(), 5)
	if c.Cap > 0 {
		n = min(n, c.Cap)
	}
	return n
}

// Notice says the runner printed its partial notice on any probe run.
func (c Column) Notice() bool { return anyNotice(c.Guest.Results) }

// InprocNotice says the default Landlock path's runs showed the runner's
// partial notice on any probe's stderr (the in-process path writes it as
// the runner prints it).
func (c Column) InprocNotice() bool { return anyNotice(c.Guest.InprocResults) }

// anyNotice says whether the partial notice is a line of any run's stderr.
func anyNotice(rs []ProbeResult) bool {
	for _, r := range rs {
		for _, l := range strings.Split(r.Stderr, "\n") {
			if strings.EqualFold(strings.TrimSpace(l), sandbox.LandlockPartialNotice) {
				return true
			}
		}
	}
	return false
}

func (c Column) result(name string) (ProbeResult, bool) { return find(c.Guest.Results, name) }

// inprocResult is the in-process path's run of probe name.
func (c Column) inprocResult(name string) (ProbeResult, bool) {
	return find(c.Guest.InprocResults, name)
}

// InProcess says the agent ran the default Landlock path in this column.
func (c Column) InProcess() bool { return c.Guest.Inproc.Kind != "" }

// Fallback says the default Landlock path's calls ran through the runner.
func (c Column) Fallback() bool { return c.Guest.Inproc.Stdout == InprocFallback }

func find(rs []ProbeResult, name string) (ProbeResult, bool) {
	for _, r := range rs {
		if r.Name == name {
			return r, true
		}
	}
	return ProbeResult{}, false
}

// AdmitGap says whether a GAP of probe p in column c is admitted by what the
// Landlock runner reports: the runner's partial notice when p's right is
// newer than the governed ABI (truncate before 3, device ioctl before 5), or
// the Landlock dialect's Ungoverned list (sandbox.DialectOf) naming p's
// effect. Pure.
func AdmitGap(p Probe, c Column) (bool, string) {
	return admitGap(p, c.Notice(), "partial notice", c.Governed())
}

// AdmitInprocGap is [AdmitGap] for the default Landlock path: the partial
// notice its own runs showed, with its report partial too (a notice the
// report contradicts admits nothing). Pure.
func AdmitInprocGap(p Probe, c Column) (bool, string) {
	return admitGap(p, c.InprocNotice() && c.Guest.Inproc.Stdout == string(sandbox.Partial), "partial notice", c.Governed())
}

// admitGap admits a gap of p by the Ungoverned list, or by a partial report
// (named by what) when p's right is newer than the governed ABI.
func admitGap(p Probe, partial bool, what string, governed int) (bool, string) {
	if p.Effect != "" {
		d, _ := sandbox.DialectOf(sandbox.BackendLandlock)
		for _, u := range d.Ungoverned {
			if strings.HasPrefix(u, p.Effect+":") {
				return true, fmt.Sprintf("admitted: the Landlock backend lists it as ungoverned (%q)", u)
			}
		}
	}
	if partial && p.Since > governed {
		return true, fmt.Sprintf("admitted: %s, and %s is ABI %d > governed ABI %d", what, p.Right, p.Since, governed)
	}
	if partial {
		return false, fmt.Sprintf("NOT ADMITTED: the %s admits only rights newer than ABI %d, and %s is not one", what, governed, p.Name)
	}
	return false, "NOT ADMITTED: no " + what + " (it claims full enforcement)"
}

// inprocCell is the verdict of an in-process run: [Cell], or "start!" when
// the launcher could not start the probe (nothing ran; a problem on a
// Landlock kernel).
func inprocCell(p Probe, r ProbeResult) string {
	if r.Exit == -1 && strings.HasPrefix(r.Stderr, "in-process start failed") {
		return "start!"
	}
	return Cell(p, r)
}

// probePath is one way the probes ran in a column: through the runner, or
// in process. Check and Render read both paths through it.
type probePath struct {
	what    string                                   // "" or "in-process ": what a problem calls the path's runs
	result  func(Column, string) (ProbeResult, bool) // the path's run of a probe
	verdict func(Probe, ProbeResult) string          // the run's cell
	admit   func(Probe, Column) (bool, string)       // whether a gap is admitted, and why
}

var (
	runnerPath = probePath{"", Column.result, Cell, AdmitGap}
	inprocPath = probePath{"in-process ", Column.inprocResult, inprocCell, AdmitInprocGap}
)

// cellNoResult is the cell of a probe the path did not run in the column.
const cellNoResult = "-"

// run is the path's run of p in column c: its result, its verdict
// ([cellNoResult] when there is none), and the problem with it ("" when
// none): no result, or a gap the path does not admit.
func (pp probePath) run(c Column, p Probe) (r ProbeResult, cell, problem string) {
	r, ok := pp.result(c, p.Name)
	if !ok {
		return r, cellNoResult, fmt.Sprintf("%s: %sprobe %s: no result", c.Name, pp.what, p.Name)
	}
	cell = pp.verdict(p, r)
	if cell == CellGap {
		if ok, why := pp.admit(p, c); !ok {
			problem = fmt.Sprintf("%s: %s%s went through (%s): %s", c.Name, pp.what, p.Name, r.Stdout, why)
		}
	}
	return r, cell, problem
}

// NotEnforcedLine is the runner's fatal line on a kernel without Landlock.
const NotEnforcedLine = "landlock-run: landlock is not enforced by this kernel (ABI unsupported or disabled)"

// Check lists every problem of the matrix: an unadmitted GAP, a probe result
// missing, a kernel without Landlock that ran anything (every probe must be
// the runner's exit 125 with its fatal line, and the real provider must say
// SANDBOX_UNAVAILABLE), a runner failure on a kernel with Landlock, or a
// provider-confined write that landed outside.
func Check(cols []Column) []string {
	var bad []string
	for _, c := range cols {
		if !c.Guest.Complete {
			bad = append(bad, c.Name+": the agent did not finish")
			continue
		}
		for _, p := range Probes {
			r, cell, problem := runnerPath.run(c, p)
			if problem != "" {
				bad = append(bad, problem)
			}
			switch {
			case cell == cellNoResult:
			case c.KernelABI() == 0 && (cell != CellRunnerFailed || r.Stderr != NotEnforcedLine || r.Changed):
				bad = append(bad, fmt.Sprintf("%s: %s on a kernel without Landlock: cell %s, stderr %q (want exit 125 with %q and no effect)", c.Name, p.Name, cell, r.Stderr, NotEnforcedLine))
			case c.KernelABI() > 0 && cell == CellRunnerFailed:
				bad = append(bad, fmt.Sprintf("%s: %s: the runner failed on a Landlock kernel: %q", c.Name, p.Name, r.Stderr))
			}
		}
		if c.InProcess() {
			bad = append(bad, checkDefaultPath(c)...)
		}
		if c.KernelABI() > 0 && c.Guest.RunnerProbe.Exit != 0 {
			bad = append(bad, fmt.Sprintf("%s: runner --probe failed on a Landlock kernel (exit %d, %q)", c.Name, c.Guest.RunnerProbe.Exit, c.Guest.RunnerProbe.Stderr))
		}
		if c.Guest.Provider.Kind == "provider" {
			if c.Guest.Provider.Changed {
				bad = append(bad, c.Name+": the provider's confined write outside the workspace landed")
			}
			if c.KernelABI() == 0 && !strings.HasPrefix(c.Guest.Provider.Stdout, "unavailable "+sandbox.ErrorCode+": ") {
				bad = append(bad, fmt.Sprintf("%s: provider without bwrap or Landlock said %q, want SANDBOX_UNAVAILABLE", c.Name, c.Guest.Provider.Stdout))
			}
		}
	}
	return bad
}

// checkDefaultPath lists the problems of a column's default Landlock path:
// on a Landlock kernel it must have run in process, each probe's verdict
// and the partial notice must be the runner's, and its report must match
// the runner's notice; on a kernel without Landlock it must have fallen
// back and run nothing (the runner's exit 125 on every probe).
func checkDefaultPath(c Column) []string {
	var bad []string
	for _, p := range Probes {
		r, cell, problem := inprocPath.run(c, p)
		if problem != "" {
			bad = append(bad, problem)
		}
		if rr, ok := c.result(p.Name); ok && cell != cellNoResult && Cell(p, rr) != cell {
			bad = append(bad, fmt.Sprintf("%s: %s: the in-process path says %s, the runner %s: the two Landlock paths must agree", c.Name, p.Name, cell, Cell(p, rr)))
		}
		if c.KernelABI() == 0 && cell != cellNoResult && (cell != CellRunnerFailed || r.Changed) {
			bad = append(bad, fmt.Sprintf("%s: %s on the default path on a kernel without Landlock: cell %s (want the runner's exit 125 and no effect)", c.Name, p.Name, cell))
		}
	}
	switch {
	case c.KernelABI() == 0:
		if !c.Fallback() {
			bad = append(bad, fmt.Sprintf("%s: the default path reports %q on a kernel without Landlock, want the runner's fallback", c.Name, c.Guest.Inproc.Stdout))
		}
	case c.Fallback():
		bad = append(bad, fmt.Sprintf("%s: the default path fell back to the runner on a Landlock kernel: %s", c.Name, c.Guest.Inproc.Stderr))
	default:
		if want := map[bool]string{true: "partial", false: "full"}[c.Notice()]; c.Guest.Inproc.Stdout != want {
			bad = append(bad, fmt.Sprintf("%s: the in-process path reports %q where the runner reports %s", c.Name, c.Guest.Inproc.Stdout, want))
		}
		if c.InprocNotice() != c.Notice() {
			bad = append(bad, fmt.Sprintf("%s: the in-process path's partial notice %v, the runner's %v: the result a model reads must not depend on the path", c.Name, c.InprocNotice(), c.Notice()))
		}
	}
	return bad
}

func providerCell(r Record) string {
	switch {
	case r.Kind == "":
		return "-"
	case strings.HasPrefix(r.Stdout, "unavailable "):
		return "UNAVAILABLE"
	case r.Changed:
		return "LANDED"
	}
	backend, _, _ := strings.Cut(r.Stdout, " |")
	return strings.ReplaceAll(backend, " ", ":")
}

// Render is the golden matrix text. hostKernel is replaced by "<host>" so
// the file does not depend on the exact host build.
func Render(cols []Column, hostKernel string) []byte {
	m := &matrix{cols: cols}
	b := &m.b
	b.WriteString("kernel matrix (go run ./cmd/kernel-matrix; DSHSIM_UPDATE=1 updates; see README \"Reading the kernel matrix\")\n")
	b.WriteString("policy: workspace-write; each probe runs as landlock-run [--abi-cap N] --ro / --rw /dev/null --rw /tmp --rw <ws> -- escape-probe OP ARGS\n")
	b.WriteString("cells: ok = permitted effect happened; denied = forbidden effect blocked; refused = permitted effect refused (fails safe);\n")
	b.WriteString("       gap = forbidden effect happened, admitted by the runner's partial notice (a right newer than the governed ABI)\n")
	b.WriteString("             or by the Landlock backend's Ungoverned list (chmod, chown, utimes, setxattr, chattr); GAP! = forbidden effect happened, NOT admitted;\n")
	b.WriteString("       125 = runner failed, nothing ran; reached/blocked = device ioctl got to the driver or not (devices are not promised)\n")
	b.WriteString("runner --probe: '-' for capped columns (--probe takes no other flags; a capped runner reports through the partial notice)\n\n")
	m.columns(hostKernel)
	b.WriteString("\n")
	m.row("", func(c Column) string { return c.Name })
	m.row("kernel ABI (--abi)", kernelABICell)
	m.row("governed ABI", func(c Column) string { return strconv.Itoa(c.Governed()) })
	m.row("runner --probe", runnerProbeCell)
	m.row("partial notice", func(c Column) string {
		if c.Notice() {
			return "yes"
		}
		return "no"
	})
	b.WriteString("\n")
	m.probeRows(runnerPath)
	b.WriteString("\ndefault Landlock path (the stack's: sandbox/chain with Landlock alone, in this process, the runner its fallback,\n")
	b.WriteString("through sandbox/spawn, capped like the runner; '-' = not run there; its gaps are admitted by its own partial notice,\n")
	b.WriteString("the runner's notes below hold for it, and a column where the two paths differ fails):\n")
	m.row("inproc report", func(c Column) string {
		if !c.InProcess() {
			return "-"
		}
		return c.Guest.Inproc.Stdout
	})
	m.row("inproc notice", func(c Column) string {
		if !c.InProcess() {
			return "-"
		}
		return map[bool]string{true: "yes", false: "no"}[c.InprocNotice()]
	})
	m.probeRows(inprocPath)
	b.WriteString("\n")
	m.row("stack (real chain)", func(c Column) string { return providerCell(c.Guest.Provider) })
	b.WriteString("\nnotes:\n")
	for _, c := range cols {
		m.notes(c)
	}
	return []byte(b.String())
}

// matrix is the kernel matrix being rendered.
type matrix struct {
	b    strings.Builder
	cols []Column
}

// matrixCellW is the width of one column's cell.
const matrixCellW = 9

// columns lists the columns: name, layer, kernel and how it ran.
func (m *matrix) columns(hostKernel string) {
	m.b.WriteString("columns:\n")
	for _, c := range m.cols {
		k := c.Guest.Kernel
		if k == hostKernel {
			k = "<host>"
		}
		how := "this machine, uncapped"
		if c.Layer == 2 {
			how = fmt.Sprintf("qemu boot of a real kernel, %d vCPU", c.CPUs)
		} else if c.Cap > 0 {
			how = fmt.Sprintf("this machine, landlock-run --abi-cap %d", c.Cap)
		}
		fmt.Fprintf(&m.b, "  %-6s layer %d  kernel %-28s %s\n", c.Name, c.Layer, k, how)
	}
}

// row writes one row: its label, then cell's text for each column.
func (m *matrix) row(label string, cell func(Column) string) {
	fmt.Fprintf(&m.b, "%-22s", label)
	for _, c := range m.cols {
		fmt.Fprintf(&m.b, " %-*s", matrixCellW, cell(c))
	}
	m.b.WriteString("\n")
}

// probeRows writes one row a probe: the path's verdict in each column, a
// gap marked GAP! unless the path admits it.
func (m *matrix) probeRows(pp probePath) {
	for _, p := range Probes {
		m.row(p.Name, func(c Column) string {
			_, cell, problem := pp.run(c, p)
			switch {
			case cell == CellGap && problem != "":
				return "GAP!"
			case cell == CellGap:
				return "gap"
			}
			return cell
		})
	}
}

// kernelABICell is the kernel's Landlock ABI, or the exit code of a
// runner --abi that found none.
func kernelABICell(c Column) string {
	if c.KernelABI() == 0 {
		return strconv.Itoa(c.Guest.ABI.Exit)
	}
	return strconv.Itoa(c.KernelABI())
}

// runnerProbeCell is what runner --probe said: full, partial, its exit
// code, a timeout, or '-' for a capped column.
func runnerProbeCell(c Column) string {
	switch {
	case c.Cap > 0:
		return "-"
	case strings.HasPrefix(c.Guest.RunnerProbe.Stderr, "timed out"):
		return "timeout"
	case c.Guest.RunnerProbe.Exit != 0:
		return strconv.Itoa(c.Guest.RunnerProbe.Exit)
	case strings.Contains(c.Guest.RunnerProbe.Stdout, "partially"):
		return "partial"
	case strings.Contains(c.Guest.RunnerProbe.Stdout, "fully"):
		return "full"
	}
	return "?"
}

// notes writes column c's notes: each gap and refusal, the runner's failure
// on a kernel without Landlock, and what the provider said.
func (m *matrix) notes(c Column) {
	for _, p := range Probes {
		r, ok := c.result(p.Name)
		if !ok {
			continue
		}
		switch cell := Cell(p, r); cell {
		case CellGap:
			_, why := AdmitGap(p, c)
			fmt.Fprintf(&m.b, "  %s %s: GAP (%s) %s\n", c.Name, p.Name, r.Stdout, why)
		case CellRefused:
			fmt.Fprintf(&m.b, "  %s %s: refused (%s)\n", c.Name, p.Name, r.Stdout)
		}
	}
	if c.KernelABI() == 0 {
		if r, ok := c.result(Probes[0].Name); ok {
			fmt.Fprintf(&m.b, "  %s every probe: exit %d, stderr %q\n", c.Name, r.Exit, r.Stderr)
		}
	}
	if c.Fallback() {
		fmt.Fprintf(&m.b, "  %s default path: the runner ran: %s\n", c.Name, c.Guest.Inproc.Stderr)
	}
	if c.Guest.Provider.Kind != "" {
		fmt.Fprintf(&m.b, "  %s stack: %s\n", c.Name, c.Guest.Provider.Stdout)
	}
}
