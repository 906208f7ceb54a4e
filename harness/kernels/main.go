package kernels

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/dshsim/dshsim/sandbox/sandboxtest"
)

// RepoRoot walks up from dir to the directory holding go.mod.
func RepoRoot(dir string) (string, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
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
		p, err := sandboxtest.BuildContext(ctx, root, dir, name, pkg, "GOOS=linux", "GOARCH=amd64")
		if err != nil {
			return nil, err
		}
		out[name] = p
	}
	return out, nil
}

// Layer1 runs the agent on this machine for caps 1..7 and uncapped (with the
// real provider), each also through the in-process path, the columns side
// by side (each in its own directory), and returns them in that order.
func Layer1(ctx context.Context, bins map[string]string, base string) ([]Column, error) {
	cols := make([]Column, 8)
	err := each(len(cols), runtime.NumCPU()*2, func(i int) error {
		cap := i + 1
		env := Env{Runner: bins["landlock-run"], Probe: bins["escape-probe"], Base: filepath.Join(base, fmt.Sprintf("l1-%d", cap))}
		name := fmt.Sprintf("cap%d", cap)
		if cap == 8 {
			name = "host"
		} else {
			env.Cap = cap
		}
		var buf bytes.Buffer
		if err := Agent(ctx, env, cap == 8, &buf); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		g, err := ParseConsole(name, buf.Bytes())
		if err != nil {
			return err
		}
		cols[i] = Column{Name: name, Layer: 1, Cap: env.Cap, Guest: g}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return cols, nil
}

// each calls f(0) ... f(n-1), up to par at once, and returns the error of
// the lowest index that failed.
func each(n, par int, f func(i int) error) error {
	errs := make([]error, n)
	sem := make(chan struct{}, max(par, 1))
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			errs[i] = f(i)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
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
	// Two guests at once: a guest under software emulation leaves much of
	// its vCPUs' time idle, so two fill this machine's two cores better than
	// one. A -baseline run boots one at a time, so its times compare.
	par := 2
	if withBaseline {
		par = 1
	}
	cols := make([]Column, len(Kernels))
	times := make([]BootTime, len(Kernels))
	err = each(len(Kernels), par, func(i int) error {
		k := Kernels[i]
		vmlinuz, err := cache.Vmlinuz(ctx, k)
		if err != nil {
			return err
		}
		console, d, err := Boot(ctx, vmlinuz, initrd, k.CPUs)
		name := "console-" + strings.ReplaceAll(k.Name, "/", "-") + ".txt"
		_ = os.WriteFile(filepath.Join(work, name), console, 0o644)
		if err != nil {
			return fmt.Errorf("boot %s: %w", k.Name, err)
		}
		if !withBaseline {
			times[i] = BootTime{Kernel: k.Name, Wall: d}
			logf("kernel-matrix: boot %s (%s): %.2fs start to power-off (%d guests at once)", k.Name, filepath.Base(vmlinuz), d.Seconds(), par)
		} else {
			_, bd, berr := Boot(ctx, vmlinuz, baseline, k.CPUs)
			if berr != nil {
				return fmt.Errorf("baseline boot %s: %w", k.Name, berr)
			}
			times[i] = BootTime{k.Name, d, bd}
			logf("kernel-matrix: boot %s (%s): %.2fs start to power-off; baseline boot (busybox only, init powers off): %.2fs; ratio %.2f",
				k.Name, filepath.Base(vmlinuz), d.Seconds(), bd.Seconds(), d.Seconds()/bd.Seconds())
		}
		g, err := ParseConsole(name, console)
		if err != nil {
			return err
		}
		cols[i] = Column{Name: k.Name, Layer: 2, CPUs: k.CPUs, Guest: g}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return cols, times, nil
}

// Options say what one run of the matrix does.
type Options struct {
	// CacheDir is the kernel download cache ("" = [DefaultCache]).
	CacheDir string
	// Layer1Only skips the qemu boots.
	Layer1Only bool
	// Baseline also boots each kernel with an init that powers off at once.
	Baseline bool
	// Keep keeps the work directory (console captures, initramfs).
	Keep bool
	// Logf receives progress (nil: none).
	Logf func(format string, args ...any)
}

// Result is one run of the matrix.
type Result struct {
	// Text is the rendered matrix (the golden file's content).
	Text []byte
	// Problems are what [Check] found.
	Problems []string
}

// Run builds the static binaries of the module at root, runs layer 1 on this
// machine and (unless o.Layer1Only) layer 2 under qemu, and renders the
// matrix. Everything it makes lives in one work directory under the scratch
// root (sandboxtest.ScratchRoot), removed before Run returns unless o.Keep;
// cancelling ctx kills what runs (qemu, probes) and still removes it.
func Run(ctx context.Context, root string, o Options) (Result, error) {
	logf := o.Logf
	if logf == nil {
		logf = func(string, ...any) {}
	}
	if o.CacheDir == "" {
		o.CacheDir = DefaultCache()
	}
	work, err := sandboxtest.MkdirScratch("dshsim-kmatrix-")
	if err != nil {
		return Result{}, err
	}
	if o.Keep {
		logf("kernel-matrix: work directory %s", work)
	} else {
		defer os.RemoveAll(work)
	}
	start := time.Now()
	bins, err := BuildStatic(ctx, root, work)
	if err != nil {
		return Result{}, err
	}
	cols, err := Layer1(ctx, bins, filepath.Join(work, "scratch"))
	if err != nil {
		return Result{}, fmt.Errorf("layer 1: %w", err)
	}
	logf("kernel-matrix: layer 1 (caps 1..7 + host): %.1fs", time.Since(start).Seconds())
	if !o.Layer1Only {
		l2, _, err := Layer2(ctx, Cache{Dir: o.CacheDir, ReadOnly: SharedCaches(o.CacheDir), Logf: logf}, bins, work, o.Baseline, logf)
		if err != nil {
			return Result{}, fmt.Errorf("layer 2: %w", err)
		}
		cols = append(cols, l2...)
	}
	host, _ := os.ReadFile("/proc/sys/kernel/osrelease")
	logf("kernel-matrix: total %.1fs", time.Since(start).Seconds())
	return Result{Text: Render(cols, strings.TrimSpace(string(host))), Problems: Check(cols)}, nil
}

// CompareGolden compares text with the golden file path: nil when they are
// equal; an error naming the file when it is missing or differs (with the
// lines that differ).
func CompareGolden(path string, text []byte) error {
	want, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("golden %s: %w (DSHSIM_UPDATE=1 writes it)", path, err)
	}
	if d := cmp.Diff(string(want), string(text)); d != "" {
		return fmt.Errorf("%s differs (-golden +now); DSHSIM_UPDATE=1 updates it:\n%s", path, d)
	}
	return nil
}
