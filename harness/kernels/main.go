package kernels

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/dshsim/dshsim/sandbox/sandboxtest"
)

// RepoRoot walks up from dir to the directory holding go.mod.
func RepoRoot(dir string) (string, error) {
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", errors.New("no go.mod above " + dir)
		}
	}
}

// BuildStatic builds the guest binaries (CGO_ENABLED=0) into dir and returns
// name -> path for landlock-run, escape-probe and matrix-agent.
func BuildStatic(ctx context.Context, root, dir string) (map[string]string, error) {
	pkgs := map[string]string{
		"landlock-run": "./cmd/landlock-run",
		"escape-probe": "./harness/escape/cmd/escape-probe",
		"matrix-agent": "./harness/kernels/cmd/matrix-agent",
	}
	out := map[string]string{}
	for name, pkg := range pkgs {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		p, err := sandboxtest.Build(root, dir, name, pkg, "GOOS=linux", "GOARCH=amd64")
		if err != nil {
			return nil, err
		}
		out[name] = p
	}
	return out, nil
}

// Layer1 runs the agent on this machine for caps 1..7 and uncapped (with the
// real provider), each also through the in-process path, and returns the
// columns.
func Layer1(ctx context.Context, bins map[string]string, base string) ([]Column, error) {
	var cols []Column
	for cap := 1; cap <= 8; cap++ {
		env := Env{Runner: bins["landlock-run"], Probe: bins["escape-probe"], Base: filepath.Join(base, fmt.Sprintf("l1-%d", cap)), InProcess: true}
		name := fmt.Sprintf("cap%d", cap)
		if cap == 8 {
			name = "host"
		} else {
			env.Cap = cap
		}
		var buf bytes.Buffer
		if err := Agent(ctx, env, cap == 8, &buf); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		g, err := ParseConsole(name, buf.Bytes())
		if err != nil {
			return nil, err
		}
		cols = append(cols, Column{Name: name, Layer: 1, Cap: env.Cap, Guest: g})
	}
	return cols, nil
}

// Boot times are reported, never asserted.
type BootTime struct {
	Kernel string
	// Wall is the matrix boot; Baseline the same kernel with an init that
	// powers off at once, measured in the same run.
	Wall, Baseline time.Duration
}

// Layer2 boots every kernel under qemu with one initramfs and returns the
// columns, the boot times and the console captures (written to work).
func Layer2(ctx context.Context, cache Cache, bins map[string]string, work string, withBaseline bool, logf func(string, ...any)) ([]Column, []BootTime, error) {
	bb, err := cache.BusyboxPath(ctx)
	if err != nil {
		return nil, nil, err
	}
	initrd := filepath.Join(work, "initrd.gz")
	if err := Initramfs(ctx, initrd, bb, InitScript, bins); err != nil {
		return nil, nil, err
	}
	baseline := filepath.Join(work, "baseline.gz")
	if err := Initramfs(ctx, baseline, bb, BaselineInit, nil); err != nil {
		return nil, nil, err
	}
	var cols []Column
	var times []BootTime
	for _, k := range Kernels {
		vmlinuz, err := cache.Vmlinuz(ctx, k)
		if err != nil {
			return nil, nil, err
		}
		console, d, err := Boot(ctx, vmlinuz, initrd, k.CPUs)
		name := "console-" + strings.ReplaceAll(k.Name, "/", "-") + ".txt"
		_ = os.WriteFile(filepath.Join(work, name), console, 0o644)
		if err != nil {
			return nil, nil, fmt.Errorf("boot %s: %w", k.Name, err)
		}
		if !withBaseline {
			times = append(times, BootTime{Kernel: k.Name, Wall: d})
			logf("kernel-matrix: boot %s (%s): %.2fs start to power-off", k.Name, filepath.Base(vmlinuz), d.Seconds())
		} else {
			_, bd, berr := Boot(ctx, vmlinuz, baseline, k.CPUs)
			if berr != nil {
				return nil, nil, fmt.Errorf("baseline boot %s: %w", k.Name, berr)
			}
			times = append(times, BootTime{k.Name, d, bd})
			logf("kernel-matrix: boot %s (%s): %.2fs start to power-off; baseline boot (busybox only, init powers off): %.2fs; ratio %.2f",
				k.Name, filepath.Base(vmlinuz), d.Seconds(), bd.Seconds(), d.Seconds()/bd.Seconds())
		}
		g, err := ParseConsole(name, console)
		if err != nil {
			return nil, nil, err
		}
		cols = append(cols, Column{Name: k.Name, Layer: 2, CPUs: k.CPUs, Guest: g})
	}
	return cols, times, nil
}

// Main is cmd/kernel-matrix: build the static binaries, run layer 1 on this
// machine and layer 2 under qemu, render the matrix, compare it with (or,
// under DSHSIM_UPDATE=1 or -update, write) the golden file, and fail on any
// problem Check finds. Exit 0 ok, 1 mismatch or problem, 2 usage or setup error.
func Main(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("kernel-matrix", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cacheDir := fs.String("cache", "", "download cache (default $XDG_CACHE_HOME/dshsim-kernels or /var/cache/dshsim-kernels)")
	golden := fs.String("golden", "", "golden file (default <repo>/snapshots/kernel-matrix.txt)")
	update := fs.Bool("update", os.Getenv("DSHSIM_UPDATE") == "1", "write the golden file instead of comparing")
	layer1 := fs.Bool("layer1", false, "layer 1 only (no qemu); compares against -golden only if given")
	baseline := fs.Bool("baseline", false, "also boot each kernel with an init that powers off at once, and report the ratio")
	keep := fs.Bool("keep", false, "keep the work directory (console captures, initramfs)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	logf := func(f string, a ...any) { fmt.Fprintf(stderr, f+"\n", a...) }
	ctx := context.Background()
	wd, _ := os.Getwd()
	root, err := RepoRoot(wd)
	if err != nil {
		logf("kernel-matrix: %v", err)
		return 2
	}
	if *golden == "" && !*layer1 {
		*golden = filepath.Join(root, "snapshots", "kernel-matrix.txt")
	}
	if *cacheDir == "" {
		*cacheDir = DefaultCache()
	}
	work, err := os.MkdirTemp("/var/tmp", "dshsim-kmatrix-")
	if err != nil {
		logf("kernel-matrix: %v", err)
		return 2
	}
	if *keep {
		logf("kernel-matrix: work directory %s", work)
	} else {
		defer os.RemoveAll(work)
	}
	start := time.Now()
	bins, err := BuildStatic(ctx, root, filepath.Join(work))
	if err != nil {
		logf("kernel-matrix: %v", err)
		return 2
	}
	cols, err := Layer1(ctx, bins, filepath.Join(work, "scratch"))
	if err != nil {
		logf("kernel-matrix: layer 1: %v", err)
		return 2
	}
	logf("kernel-matrix: layer 1 (caps 1..7 + host): %.1fs", time.Since(start).Seconds())
	if !*layer1 {
		l2, _, err := Layer2(ctx, Cache{Dir: *cacheDir, Logf: logf}, bins, work, *baseline, logf)
		if err != nil {
			logf("kernel-matrix: layer 2: %v", err)
			return 2
		}
		cols = append(cols, l2...)
	}
	host, _ := os.ReadFile("/proc/sys/kernel/osrelease")
	text := Render(cols, strings.TrimSpace(string(host)))
	code := 0
	switch {
	case *golden == "":
		stdout.Write(text)
	case *update:
		if err := os.WriteFile(*golden, text, 0o644); err != nil {
			logf("kernel-matrix: %v", err)
			return 2
		}
		logf("kernel-matrix: wrote %s", *golden)
	default:
		want, err := os.ReadFile(*golden)
		if err != nil {
			logf("kernel-matrix: %v (DSHSIM_UPDATE=1 writes it)", err)
			return 1
		}
		if d := cmp.Diff(string(want), string(text)); d != "" {
			logf("kernel-matrix: %s differs (-golden +now); DSHSIM_UPDATE=1 updates it:\n%s", *golden, d)
			code = 1
		}
	}
	for _, p := range Check(cols) {
		logf("kernel-matrix: PROBLEM: %s", p)
		code = 1
	}
	logf("kernel-matrix: total %.1fs", time.Since(start).Seconds())
	return code
}
