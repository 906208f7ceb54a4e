package kernels_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/dshsim/dshsim/harness"
	"github.com/dshsim/dshsim/harness/kernels"
	"github.com/dshsim/dshsim/sandbox"
	"github.com/dshsim/dshsim/sandbox/sandboxtest"
)

func readConsole(t *testing.T, name string) kernels.Guest {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	g, err := kernels.ParseConsole(name, data)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// The captures in testdata are real serial consoles of qemu boots made by
// cmd/kernel-matrix (Debian 5.10 without Landlock, 6.1 with ABI 2).
func TestRealConsoleOfAKernelWithoutLandlockShowsTheFailClosedPath(t *testing.T) {
	g := readConsole(t, "console-5.10.txt")
	if g.Kernel != "5.10.0-32-cloud-amd64" || len(g.Results) != len(kernels.Probes) {
		t.Fatalf("kernel %q, %d results", g.Kernel, len(g.Results))
	}
	col := kernels.Column{Name: "5.10", Layer: 2, Guest: g}
	if col.KernelABI() != 0 {
		t.Fatalf("kernel ABI %d, want 0 (no Landlock)", col.KernelABI())
	}
	for _, r := range g.Results {
		p := probeByName(t, r.Name)
		if c := kernels.Cell(p, r); c != kernels.CellRunnerFailed || r.Changed {
			t.Errorf("%s: cell %s changed %v, want 125 and no effect", r.Name, c, r.Changed)
		}
	}
	if !strings.HasPrefix(g.Provider.Stdout, "unavailable SANDBOX_UNAVAILABLE: ") {
		t.Errorf("provider said %q", g.Provider.Stdout)
	}
	if p := kernels.Check([]kernels.Column{col}); len(p) != 0 {
		t.Errorf("Check found problems on the fail-closed capture: %v", p)
	}
}

func TestRealConsoleOfABI2KernelReportsPartialAndTheTruncateGapIsAdmitted(t *testing.T) {
	g := readConsole(t, "console-6.1.txt")
	col := kernels.Column{Name: "6.1", Layer: 2, Guest: g}
	if col.KernelABI() != 2 || col.Governed() != 2 || !col.Notice() {
		t.Fatalf("ABI %d governed %d notice %v", col.KernelABI(), col.Governed(), col.Notice())
	}
	r := resultByName(t, g, "truncate-outside")
	if c := kernels.Cell(probeByName(t, "truncate-outside"), r); c != kernels.CellGap {
		t.Fatalf("truncate-outside cell %s, want GAP on ABI 2", c)
	}
	if ok, why := kernels.AdmitGap(probeByName(t, "truncate-outside"), col); !ok {
		t.Fatalf("truncate gap on ABI 2 with the notice not admitted: %s", why)
	}
	if c := kernels.Cell(probeByName(t, "rename-across-inside"), resultByName(t, g, "rename-across-inside")); c != kernels.CellOK {
		t.Errorf("REFER exists on ABI 2; rename across workspace dirs: %s", c)
	}
}

func probeByName(t *testing.T, name string) kernels.Probe {
	t.Helper()
	return byName(t, "probe", kernels.Probes, name, func(p kernels.Probe) string { return p.Name })
}

func resultByName(t *testing.T, g kernels.Guest, name string) kernels.ProbeResult {
	t.Helper()
	return byName(t, "result", g.Results, name, func(r kernels.ProbeResult) string { return r.Name })
}

// byName is the item of items called name; the test fails (naming what it
// looked for) when there is none.
func byName[T any](t *testing.T, what string, items []T, name string, nameOf func(T) string) T {
	t.Helper()
	for _, it := range items {
		if nameOf(it) == name {
			return it
		}
	}
	t.Fatalf("no %s %s", what, name)
	var zero T
	return zero
}

func TestParseConsoleRejectsBadRecordsNamingTheLine(t *testing.T) {
	end := `@@DSHSIM {"kind":"end","exit":0}` + "\n"
	cases := []struct {
		name, console, want string
	}{
		{"bad json names the console line", "boot noise\n@@DSHSIM {not json\n" + end, "c.txt:2: bad record"},
		{"unknown field is refused", `@@DSHSIM {"kind":"end","exit":0,"extra":1}` + "\n", "c.txt:1: bad record"},
		{"unknown kind names the field", `@@DSHSIM {"kind":"mystery","exit":0}` + "\n" + end, "c.txt:1: field kind: unknown"},
		{"probe without name", `@@DSHSIM {"kind":"probe","exit":0}` + "\n" + end, "c.txt:1: field name: missing"},
		{"a guest that never finished", `@@DSHSIM {"kind":"kernel","exit":0,"stdout":"6.1"}` + "\n", "no end record (the guest did not finish; 1 console lines"},
		{"a guest kernel that panicked says so", "[    0.036000] Kernel panic - not syncing: IO-APIC + timer doesn't work!  Boot with apic=debug\r\n[    0.036000] Call Trace:\r\n",
			`no end record: the guest kernel panicked ("Kernel panic - not syncing: IO-APIC + timer doesn't work!  Boot with apic=debug"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := kernels.ParseConsole("c.txt", []byte(tc.console))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

// TestBootSkipsTheTimerCheck: the guest kernel must not run its early
// IO-APIC timer check, which panics a guest whose vCPU a loaded host starved
// of timer interrupts (kernel-matrix's "no end record" under load).
func TestBootSkipsTheTimerCheck(t *testing.T) {
	if !strings.Contains(" "+kernels.KernelCmdline+" ", " no_timer_check ") {
		t.Fatalf("kernel command line %q lacks no_timer_check", kernels.KernelCmdline)
	}
}

func TestParseConsoleIgnoresCarriageReturnsAndPrefixNoise(t *testing.T) {
	con := "\x1bc\x1b[2J@@DSHSIM {\"kind\":\"kernel\",\"exit\":0,\"stdout\":\"6.12\"}\r\n@@DSHSIM {\"kind\":\"end\",\"exit\":0}\r\n"
	g, err := kernels.ParseConsole("c", []byte(con))
	if err != nil || g.Kernel != "6.12" || !g.Complete {
		t.Fatalf("g %+v err %v", g, err)
	}
}

func TestCell(t *testing.T) {
	out := kernels.Probe{Name: "w", Where: kernels.Outside}
	in := kernels.Probe{Name: "i", Where: kernels.InWorkspace}
	dev := kernels.Probe{Name: "d", Where: kernels.Device}
	fatal := "landlock-run: landlock is not enforced by this kernel (ABI unsupported or disabled)"
	cases := []struct {
		name string
		p    kernels.Probe
		r    kernels.ProbeResult
		want string
	}{
		{"forbidden effect that landed is a gap", out, kernels.ProbeResult{Changed: true}, kernels.CellGap},
		{"forbidden effect blocked is denied", out, kernels.ProbeResult{Exit: 1}, kernels.CellDenied},
		{"permitted effect is ok", in, kernels.ProbeResult{Changed: true}, kernels.CellOK},
		{"permitted effect refused", in, kernels.ProbeResult{Exit: 1}, kernels.CellRefused},
		{"exit 125 with a fatal line is a runner failure", out, kernels.ProbeResult{Exit: 125, Stderr: fatal}, kernels.CellRunnerFailed},
		{"exit 125 with only the notice is the probe's own status", out, kernels.ProbeResult{Exit: 125, Stderr: sandbox.LandlockPartialNotice}, kernels.CellDenied},
		{"a runner failure with an effect is still a gap", out, kernels.ProbeResult{Exit: 125, Stderr: fatal, Changed: true}, kernels.CellGap},
		{"ioctl that reached the driver", dev, kernels.ProbeResult{}, kernels.CellReached},
		{"ioctl refused", dev, kernels.ProbeResult{Exit: 1}, kernels.CellBlocked},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := kernels.Cell(tc.p, tc.r); got != tc.want {
				t.Fatalf("got %s, want %s", got, tc.want)
			}
		})
	}
}

func col(abi string, capN int, notice bool) kernels.Column {
	r := kernels.ProbeResult{Name: "x"}
	if notice {
		r.Stderr = sandbox.LandlockPartialNotice
	}
	return kernels.Column{Name: "c", Cap: capN, Guest: kernels.Guest{ABI: kernels.Record{Kind: "abi", Stdout: "landlock: kernel ABI " + abi}, Results: []kernels.ProbeResult{r}, Complete: true}}
}

func TestAdmitGap(t *testing.T) {
	trunc := kernels.Probe{Name: "truncate-outside", Right: "truncate", Since: 3}
	ioctl := kernels.Probe{Name: "device-ioctl", Right: "ioctl", Since: 5}
	chmod := kernels.Probe{Name: "chmod-outside", Right: "metadata", Since: 0, Effect: "chmod"}
	mknod := kernels.Probe{Name: "mknod-outside", Right: "metadata", Since: 0, Effect: "mknod"}
	write := kernels.Probe{Name: "write-outside", Since: 1}
	cases := []struct {
		name string
		p    kernels.Probe
		c    kernels.Column
		want bool
	}{
		{"truncate below ABI 3 with the notice is admitted", trunc, col("7", 2, true), true},
		{"truncate below ABI 3 without the notice is not", trunc, col("7", 2, false), false},
		{"truncate at ABI 3 is not admitted", trunc, col("7", 3, true), false},
		{"ioctl at ABI 4 with the notice is admitted", ioctl, col("4", 0, true), true},
		{"chmod is admitted by the backend's Ungoverned list", chmod, col("7", 0, false), true},
		{"an effect the list does not name is not admitted", mknod, col("7", 0, false), false},
		{"a basic write is never admitted", write, col("7", 1, true), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got, why := kernels.AdmitGap(tc.p, tc.c); got != tc.want {
				t.Fatalf("got %v (%s), want %v", got, why, tc.want)
			}
		})
	}
}

func TestCheckCatchesAnUnconfinedRunOnAKernelWithoutLandlock(t *testing.T) {
	g := readConsole(t, "console-5.10.txt")
	g.Results[1].Exit, g.Results[1].Stderr, g.Results[1].Changed = 0, "", true // write-outside ran unconfined
	g.Provider.Stdout = "landlock full | write: ok"
	p := kernels.Check([]kernels.Column{{Name: "5.10", Layer: 2, Guest: g}})
	joined := strings.Join(p, "\n")
	for _, want := range []string{"write-outside went through", "write-outside on a kernel without Landlock", "want SANDBOX_UNAVAILABLE"} {
		if !strings.Contains(joined, want) {
			t.Errorf("problems %q lack %q", joined, want)
		}
	}
}

// matrixRun is the one run of both layers per test binary.
var matrixRun struct {
	once sync.Once
	res  kernels.Result
	err  error
	log  bytes.Buffer
}

// kernelMatrix runs the matrix (both layers, as cmd/kernel-matrix does) once
// per test binary.
func kernelMatrix(t *testing.T) kernels.Result {
	t.Helper()
	if testing.Short() {
		t.Skip("boots three kernels under qemu; not in -short")
	}
	if _, err := exec.LookPath("qemu-system-x86_64"); err != nil {
		t.Skip("qemu-system-x86_64 is not installed (apt-get install qemu-system-x86); layer 2 cannot run here")
	}
	matrixRun.once.Do(func() {
		root, err := kernels.RepoRoot(".")
		if err != nil {
			matrixRun.err = err
			return
		}
		// A fresh scratch root and TMPDIR, which must be empty afterwards:
		// the run leaves nothing behind.
		scratch, tmp := sandboxtest.TempDir(t, "dshsim-kmatrix-test-"), t.TempDir()
		t.Setenv(sandboxtest.ScratchEnv, scratch)
		t.Setenv("TMPDIR", tmp)
		logf := func(f string, a ...any) { fmt.Fprintf(&matrixRun.log, f+"\n", a...) }
		matrixRun.res, matrixRun.err = kernels.Run(context.Background(), root, kernels.Options{Logf: logf})
		t.Log(matrixRun.log.String())
		if left := sandboxtest.Leftovers(scratch, tmp); len(left) > 0 && matrixRun.err == nil {
			matrixRun.err = fmt.Errorf("the run left %v behind", left)
		}
	})
	if matrixRun.err != nil {
		t.Fatalf("kernel matrix: %v", matrixRun.err)
	}
	return matrixRun.res
}

func TestKernelMatrixMatchesGolden(t *testing.T) {
	res := kernelMatrix(t)
	golden := filepath.Join("..", "..", "snapshots", "kernel-matrix.txt")
	if harness.Updating() {
		if err := os.WriteFile(golden, res.Text, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if err := kernels.CompareGolden(golden, res.Text); err != nil {
		t.Fatal(err)
	}
}

func TestKernelMatrixHasNoProblem(t *testing.T) {
	for _, p := range kernelMatrix(t).Problems {
		t.Error(p)
	}
}

// TestCompareGolden: a missing golden file fails (naming it and how to
// write it), a differing one fails with the difference, an equal one passes.
func TestCompareGolden(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "kernel-matrix.txt")
	if err := kernels.CompareGolden(path, []byte("m\n")); err == nil || !strings.Contains(err.Error(), "golden "+path) || !strings.Contains(err.Error(), "DSHSIM_UPDATE=1 writes it") {
		t.Errorf("missing golden: %v", err)
	}
	if err := os.WriteFile(path, []byte("m\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := kernels.CompareGolden(path, []byte("m\n")); err != nil {
		t.Errorf("equal: %v", err)
	}
	if err := kernels.CompareGolden(path, []byte("n\n")); err == nil || !strings.Contains(err.Error(), path+" differs") {
		t.Errorf("differing: %v", err)
	}
}

// TestInProcessPathIsHeldToTheRunnersReport: the default path's gaps are
// admitted by its own partial notice with a partial report (as the
// runner's are by its notice), and Check fails a column whose default path
// disagrees with the runner, reports another enforcement, shows another
// notice, or fell back to the runner on a Landlock kernel.
func TestInProcessPathIsHeldToTheRunnersReport(t *testing.T) {
	trunc := kernels.Probe{Name: "truncate-outside", Right: "truncate", Since: 3}
	c := col("7", 2, true)
	c.Guest.Inproc = kernels.Record{Kind: "inproc", Stdout: "partial"}
	c.Guest.InprocResults = c.Guest.Results
	if ok, why := kernels.AdmitInprocGap(trunc, c); !ok {
		t.Errorf("a truncate gap under the in-process notice and a partial report at ABI 2: %s", why)
	}
	c.Guest.Inproc.Stdout = "full"
	if ok, _ := kernels.AdmitInprocGap(trunc, c); ok {
		t.Error("a truncate gap under a full in-process report was admitted")
	}
	c.Guest.Inproc.Stdout = "partial"
	c.Guest.InprocResults = []kernels.ProbeResult{{Name: "x"}}
	if ok, _ := kernels.AdmitInprocGap(trunc, c); ok {
		t.Error("a truncate gap without the in-process notice was admitted")
	}

	base := deniedEverywhere()
	results := base.Results
	same := kernels.Check([]kernels.Column{{Name: "host", Layer: 1, Guest: base}})
	for _, p := range same {
		if strings.Contains(p, "in-process") {
			t.Errorf("agreeing paths: %s", p)
		}
	}
	differ := base
	differ.InprocResults = append([]kernels.ProbeResult(nil), results...)
	differ.InprocResults[1] = kernels.ProbeResult{Name: results[1].Name, Exit: 0, Changed: true, Stdout: "write: ok"}
	differ.Inproc.Stdout = "partial"
	joined := strings.Join(kernels.Check([]kernels.Column{{Name: "host", Layer: 1, Guest: differ}}), "\n")
	for _, want := range []string{"in-process write-outside went through", "the two Landlock paths must agree", `the in-process path reports "partial" where the runner reports full`} {
		if !strings.Contains(joined, want) {
			t.Errorf("problems %q lack %q", joined, want)
		}
	}
	noticed := base
	noticed.InprocResults = append([]kernels.ProbeResult(nil), results...)
	noticed.InprocResults[0].Stderr = sandbox.LandlockPartialNotice
	if joined := strings.Join(kernels.Check([]kernels.Column{{Name: "host", Layer: 1, Guest: noticed}}), "\n"); !strings.Contains(joined, "the in-process path's partial notice true, the runner's false") {
		t.Errorf("a notice only the in-process path showed: problems %q", joined)
	}
	fell := base
	fell.Inproc = kernels.Record{Kind: "inproc", Stdout: kernels.InprocFallback, Stderr: "why"}
	if joined := strings.Join(kernels.Check([]kernels.Column{{Name: "host", Layer: 1, Guest: fell}}), "\n"); !strings.Contains(joined, "the default path fell back to the runner on a Landlock kernel: why") {
		t.Errorf("a fallback on a Landlock kernel: problems %q", joined)
	}
	none := base
	none.ABI = kernels.Record{Kind: "abi", Exit: 125}
	for i := range none.Results {
		none.Results[i] = kernels.ProbeResult{Name: none.Results[i].Name, Exit: 125, Stderr: kernels.NotEnforcedLine}
	}
	none.InprocResults = append([]kernels.ProbeResult(nil), none.Results...)
	none.InprocResults[0] = kernels.ProbeResult{Name: none.Results[0].Name, Exit: 1}
	joined = strings.Join(kernels.Check([]kernels.Column{{Name: "5.10", Layer: 2, Guest: none}}), "\n")
	for _, want := range []string{"on the default path on a kernel without Landlock: cell refused", `the default path reports "full" on a kernel without Landlock, want the runner's fallback`} {
		if !strings.Contains(joined, want) {
			t.Errorf("a default path that ran on a kernel without Landlock: problems %q lack %q", joined, want)
		}
	}
}

// deniedEverywhere is a Landlock ABI 7 guest where both paths ran every
// probe and were denied.
func deniedEverywhere() kernels.Guest {
	var results []kernels.ProbeResult
	for _, p := range kernels.Probes {
		results = append(results, kernels.ProbeResult{Name: p.Name, Exit: 1, Stdout: p.Args[0] + ": EACCES (permission denied)"})
	}
	return kernels.Guest{ABI: kernels.Record{Kind: "abi", Stdout: "landlock: kernel ABI 7"}, Results: results, Complete: true,
		Inproc: kernels.Record{Kind: "inproc", Stdout: "full"}, InprocResults: append([]kernels.ProbeResult(nil), results...)}
}

// TestCheckAndRenderNameEachPathsMissingResultAndGap: a probe one path did
// not run is a problem naming that path (and nothing else: the paths are not
// compared there) and a '-' cell in that path's row; a gap neither path
// admits is GAP! in its row; a runner failure on a Landlock kernel is a
// problem.
func TestCheckAndRenderNameEachPathsMissingResultAndGap(t *testing.T) {
	g := deniedEverywhere()
	first, second, third := g.Results[0].Name, g.Results[1].Name, g.Results[2].Name
	g.Results = g.Results[1:]
	g.Results[0] = kernels.ProbeResult{Name: second, Exit: 0, Changed: true, Stdout: "write: ok"}
	g.Results[1] = kernels.ProbeResult{Name: third, Exit: 125, Stderr: "landlock-run: boom"}
	g.InprocResults = append(g.InprocResults[:1], g.InprocResults[2:]...)
	cols := []kernels.Column{{Name: "host", Layer: 1, Guest: g}}
	joined := strings.Join(kernels.Check(cols), "\n")
	for _, want := range []string{"host: probe " + first + ": no result", "host: in-process probe " + second + ": no result", "host: " + second + " went through (write: ok): NOT ADMITTED",
		"host: " + third + `: the runner failed on a Landlock kernel: "landlock-run: boom"`} {
		if !strings.Contains(joined, want) {
			t.Errorf("problems %q lack %q", joined, want)
		}
	}
	for _, notWant := range []string{"host: " + first + ": the in-process path says", "host: " + second + ": the in-process path says", "without Landlock"} {
		if strings.Contains(joined, notWant) {
			t.Errorf("problems %q hold %q", joined, notWant)
		}
	}
	var rows []string
	for _, line := range strings.Split(string(kernels.Render(cols, "")), "\n") {
		if name, _, _ := strings.Cut(line, " "); name == first || name == second {
			rows = append(rows, strings.Join(strings.Fields(line), " "))
		}
	}
	want := []string{first + " -", second + " GAP!", first + " " + kernels.Cell(kernels.Probes[0], g.InprocResults[0]), second + " -"}
	if strings.Join(rows, "|") != strings.Join(want, "|") {
		t.Errorf("probe rows %q, want %q (runner rows, then in-process rows)", rows, want)
	}
}

func TestParseConsoleReadsTheInProcessRecords(t *testing.T) {
	console := kernels.Marker + `{"kind":"inproc","exit":0,"stdout":"partial"}` + "\n" +
		kernels.Marker + `{"kind":"inproc-probe","name":"write-outside","exit":1,"stdout":"write: EACCES"}` + "\n" +
		kernels.Marker + `{"kind":"end","exit":0}` + "\n"
	g, err := kernels.ParseConsole("c", []byte(console))
	if err != nil {
		t.Fatal(err)
	}
	if g.Inproc.Stdout != "partial" || len(g.InprocResults) != 1 || g.InprocResults[0].Name != "write-outside" {
		t.Errorf("guest %+v", g)
	}
	if _, err := kernels.ParseConsole("c", []byte(kernels.Marker+`{"kind":"inproc-probe","exit":1}`+"\n")); err == nil || !strings.Contains(err.Error(), "c:1: field name: missing in inproc-probe record") {
		t.Errorf("an inproc-probe record without a name: %v", err)
	}
}

// TestInitramfsEntriesAreRootsAndSearchable: whoever builds the initramfs,
// its / is mode 0755 and every entry belongs to root. The runner drops every
// capability, so a guest root could not exec /bin/escape-probe under a /
// that only the building user may traverse (os.MkdirTemp makes it 0700),
// which is what a build by uid 65534 produced.
func TestInitramfsEntriesAreRootsAndSearchable(t *testing.T) {
	for _, tool := range []string{"cpio", "gzip"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("needs %s (apt-get install %s)", tool, tool)
		}
	}
	dir := t.TempDir()
	fake := filepath.Join(dir, "busybox")
	if err := os.WriteFile(fake, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(dir, "initrd.gz")
	if err := kernels.Initramfs(context.Background(), dst, fake, kernels.BaselineInit, map[string]string{"escape-probe": fake}); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("sh", "-c", `gzip -dc "$1" | cpio -itv --numeric-uid-gid --quiet`, "sh", dst).Output()
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	for _, l := range lines {
		f := strings.Fields(l)
		if len(f) < 9 || f[2] != "0" || f[3] != "0" {
			t.Errorf("entry not root's: %q", l)
		}
		if f[len(f)-1] == "." && f[0] != "drwxr-xr-x" {
			t.Errorf("/ is %s, want drwxr-xr-x", f[0])
		}
	}
	if len(lines) < 5 {
		t.Fatalf("listing %q", out)
	}
}
