package kernels

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/dshsim/dshsim/harness/escape"
	"github.com/dshsim/dshsim/sandbox"
	"github.com/dshsim/dshsim/sandbox/chain"
	"github.com/dshsim/dshsim/sandbox/inproc"
	"github.com/dshsim/dshsim/sandbox/spawn"
)

// recordTimeout bounds one runner report (--abi, --probe) or provider run:
// generous, because a guest under software emulation on a loaded host is slow,
// and still far below the boot's own limit.
const recordTimeout = 30 * time.Second

// Marker starts every console line the agent writes.
const Marker = "@@DSHSIM "

// Record is one console line of the agent (JSON after Marker).
type Record struct {
	// Kind is kernel, abi, runner-probe, probe, inproc, inproc-probe,
	// provider or end.
	Kind string `json:"kind"`
	// Name is the probe name (kind probe).
	Name string `json:"name,omitempty"`
	// Exit is the exit status of what ran.
	Exit int `json:"exit"`
	// Changed says the probe's effect location changed (kind probe, provider).
	Changed bool `json:"changed,omitempty"`
	// Stdout and Stderr are what ran printed (trimmed).
	Stdout string `json:"stdout,omitempty"`
	Stderr string `json:"stderr,omitempty"`
}

// Guest is what one run of the agent reported.
type Guest struct {
	Kernel      string
	ABI         Record
	RunnerProbe Record
	Results     []ProbeResult
	// Inproc is the default Landlock path's report (kind inproc; Stdout
	// full or partial, or "fallback" with the reason in Stderr),
	// InprocResults its probe runs.
	Inproc        Record
	InprocResults []ProbeResult
	Provider      Record
	// Complete says the end record was seen.
	Complete bool
}

// Agent runs the runner's own reports, every probe and (when provider is set)
// the real sandbox provider, and writes one Record per line to w. It makes
// env.Base when it does not exist, and then removes it at the end.
func Agent(ctx context.Context, env Env, provider bool, w io.Writer) (err error) {
	if _, serr := os.Stat(env.Base); errors.Is(serr, os.ErrNotExist) {
		if err := os.MkdirAll(env.Base, 0o755); err != nil {
			return err
		}
		defer os.RemoveAll(env.Base)
	}
	emit := func(r Record) {
		if err != nil {
			return
		}
		b, _ := json.Marshal(r)
		_, err = fmt.Fprintf(w, "%s%s\n", Marker, b)
	}
	uname, rerr := os.ReadFile("/proc/sys/kernel/osrelease")
	if rerr != nil {
		return rerr
	}
	emit(Record{Kind: "kernel", Stdout: strings.TrimSpace(string(uname))})
	emit(run(ctx, "abi", env.Runner, "--abi"))
	emit(run(ctx, "runner-probe", env.Runner, "--probe"))
	rs, perr := RunProbes(ctx, env, nil)
	if perr != nil {
		return perr
	}
	for _, r := range rs {
		emit(Record{Kind: "probe", Name: r.Name, Exit: r.Exit, Changed: r.Changed, Stdout: r.Stdout, Stderr: r.Stderr})
	}
	in, rs, err := defaultPathProbes(ctx, env)
	if err != nil {
		return fmt.Errorf("the default Landlock path: %w", err)
	}
	emit(in)
	for _, r := range rs {
		emit(Record{Kind: "inproc-probe", Name: r.Name, Exit: r.Exit, Changed: r.Changed, Stdout: r.Stdout, Stderr: r.Stderr})
	}
	if provider {
		r, err := providerCheck(ctx, env)
		if err != nil {
			return fmt.Errorf("provider: %w", err)
		}
		emit(r)
	}
	emit(Record{Kind: "end"})
	return err
}

func run(ctx context.Context, kind string, argv ...string) Record {
	ctx, cancel := context.WithTimeout(ctx, recordTimeout) // a hung runner becomes a record, not a hung boot
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	var so, se bytes.Buffer
	cmd.Stdout, cmd.Stderr = &so, &se
	err := cmd.Run()
	r := Record{Kind: kind, Stdout: strings.TrimSpace(so.String()), Stderr: strings.TrimSpace(se.String())}
	var ee *exec.ExitError
	switch {
	case ctx.Err() == context.DeadlineExceeded:
		r.Exit, r.Stderr = -1, fmt.Sprintf("timed out after %v", recordTimeout)
	case errors.As(err, &ee):
		r.Exit = ee.ExitCode()
	case err != nil:
		r.Exit, r.Stderr = -1, err.Error()
	}
	return r
}

// defaultPathProbes runs every probe on the stack's default Landlock path
// as on a host without bwrap (package sandbox/chain with Landlock alone,
// capped at env.Cap like the runner: in this process, the runner its
// fallback) and returns its report record (kind inproc: Stdout its
// enforcement, or "fallback" with the reason in Stderr when the runner
// confined the calls) and the probe runs.
func defaultPathProbes(ctx context.Context, env Env) (Record, []ProbeResult, error) {
	c, err := chain.New(chain.Config{Sandbox: sandbox.Config{Platform: "linux", Chain: []string{sandbox.BackendLandlock}, LauncherPath: env.Runner, LandlockABICap: env.Cap}})
	if err != nil {
		return Record{}, nil, err
	}
	defer c.Close()
	rec := Record{Kind: "inproc"}
	if b, enf := c.Selected(); b == inproc.Backend {
		rec.Stdout = string(enf)
	} else {
		rec.Stdout, rec.Stderr = InprocFallback, c.Fallback()
	}
	rs, err := RunProbes(ctx, env, c)
	return rec, rs, err
}

// InprocFallback is the inproc record's report when the default path's
// calls ran through the runner.
const InprocFallback = "fallback"

// providerCheck asks the stack's confiner (package sandbox/chain over the
// default Linux chain: bwrap, then Landlock in this process, the runner its
// fallback) to confine a write outside the workspace, and runs it through
// spawn if it can. Stdout is "unavailable <code>: <message>" or "<backend>
// <enforcement> | <output>". A layout or snapshot that fails is an error
// (never "no change").
func providerCheck(ctx context.Context, env Env) (Record, error) {
	dir := filepath.Join(env.Base, "provider")
	ws, out := filepath.Join(dir, "ws"), filepath.Join(dir, "out")
	for _, d := range []string{ws, out} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return Record{}, err
		}
	}
	defer os.RemoveAll(dir)
	c, err := chain.New(chain.Config{Sandbox: sandbox.Config{LauncherPath: env.Runner}})
	if err != nil {
		return Record{Kind: "provider", Exit: -1, Stdout: "config error", Stderr: err.Error()}, nil
	}
	defer c.Close()
	before, err := escape.Take(map[string]string{"out": out}, nil)
	if err != nil {
		return Record{}, err
	}
	rctx, cancel := context.WithTimeout(ctx, recordTimeout)
	defer cancel()
	res, err := spawn.Run(rctx, spawn.Request{Argv: []string{env.Probe, "write", filepath.Join(out, "new")}, Confiner: c, Dir: ws,
		Policy: sandbox.Policy{Mode: sandbox.WorkspaceWrite, WorkspaceRoot: ws}, OutputDir: dir})
	var ue *sandbox.UnavailableError
	switch {
	case errors.As(err, &ue) && res.Sandbox == nil:
		return Record{Kind: "provider", Exit: -1, Stdout: "unavailable " + ue.Code() + ": " + ue.Error()}, nil
	case err != nil && res.Sandbox == nil:
		return Record{Kind: "provider", Exit: -1, Stdout: "error", Stderr: err.Error()}, nil
	}
	after, err := escape.Take(map[string]string{"out": out}, nil)
	if err != nil {
		return Record{}, err
	}
	r := Record{Kind: "provider", Exit: res.ExitCode, Stderr: strings.TrimSpace(res.Stderr.Text)}
	r.Changed = len(escape.Diff(before, after)) > 0
	r.Stdout = res.Sandbox.Backend + " " + string(res.Sandbox.Enforcement) + " | " + strings.TrimSpace(res.Stdout.Text)
	return r, nil
}

// ParseConsole reads the agent's records from a serial console capture
// (other lines are ignored; a carriage return before the newline is
// dropped). A marker line that is not a valid record is an error naming the
// console line.
func ParseConsole(name string, data []byte) (Guest, error) {
	var g Guest
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimRight(sc.Text(), "\r")
		i := strings.Index(line, Marker)
		if i < 0 {
			continue
		}
		var r Record
		dec := json.NewDecoder(strings.NewReader(line[i+len(Marker):]))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&r); err != nil {
			return g, fmt.Errorf("%s:%d: bad record: %v", name, n, err)
		}
		switch r.Kind {
		case "kernel":
			g.Kernel = r.Stdout
		case "abi":
			g.ABI = r
		case "runner-probe":
			g.RunnerProbe = r
		case "probe", "inproc-probe":
			if r.Name == "" {
				return g, fmt.Errorf("%s:%d: field name: missing in %s record", name, n, r.Kind)
			}
			results := &g.Results
			if r.Kind == "inproc-probe" {
				results = &g.InprocResults
			}
			*results = append(*results, ProbeResult{Name: r.Name, Exit: r.Exit, Changed: r.Changed, Stdout: r.Stdout, Stderr: r.Stderr})
		case "inproc":
			g.Inproc = r
		case "provider":
			g.Provider = r
		case "end":
			g.Complete = true
		default:
			return g, fmt.Errorf("%s:%d: field kind: unknown %q", name, n, r.Kind)
		}
	}
	if err := sc.Err(); err != nil {
		return g, fmt.Errorf("%s: %w", name, err)
	}
	if !g.Complete {
		if i := bytes.Index(data, []byte("Kernel panic")); i >= 0 {
			line, _, _ := bytes.Cut(data[i:], []byte("\n"))
			return g, fmt.Errorf("%s: no end record: the guest kernel panicked (%q; console tail %q)", name, bytes.TrimSpace(line), tail(data, 600))
		}
		return g, fmt.Errorf("%s: no end record (the guest did not finish; %d console lines; last lines: %q)", name, n, tail(data, 600))
	}
	return g, nil
}
