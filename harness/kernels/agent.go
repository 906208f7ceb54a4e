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
)

// Marker starts every console line the agent writes.
const Marker = "@@DSHSIM "

// Record is one console line of the agent (JSON after Marker).
type Record struct {
	// Kind is kernel, abi, runner-probe, probe, provider or end.
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
	Provider    Record
	// Complete says the end record was seen.
	Complete bool
}

// Agent runs the runner's own reports, every probe and (when provider is set)
// the real sandbox provider, and writes one Record per line to w.
func Agent(ctx context.Context, env Env, provider bool, w io.Writer) error {
	emit := func(r Record) {
		b, _ := json.Marshal(r)
		fmt.Fprintf(w, "%s%s\n", Marker, b)
	}
	uname, err := os.ReadFile("/proc/sys/kernel/osrelease")
	if err != nil {
		return err
	}
	emit(Record{Kind: "kernel", Stdout: strings.TrimSpace(string(uname))})
	emit(run(ctx, "abi", env.Runner, "--abi"))
	emit(run(ctx, "runner-probe", env.Runner, "--probe"))
	rs, err := RunProbes(ctx, env)
	if err != nil {
		return err
	}
	for _, r := range rs {
		emit(Record{Kind: "probe", Name: r.Name, Exit: r.Exit, Changed: r.Changed, Stdout: r.Stdout, Stderr: r.Stderr})
	}
	if provider {
		emit(providerCheck(ctx, env))
	}
	emit(Record{Kind: "end"})
	return nil
}

func run(ctx context.Context, kind string, argv ...string) Record {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second) // a hung runner becomes a record, not a hung boot
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	var so, se bytes.Buffer
	cmd.Stdout, cmd.Stderr = &so, &se
	err := cmd.Run()
	r := Record{Kind: kind, Stdout: strings.TrimSpace(so.String()), Stderr: strings.TrimSpace(se.String())}
	var ee *exec.ExitError
	switch {
	case ctx.Err() == context.DeadlineExceeded:
		r.Exit, r.Stderr = -1, "timed out after 10s"
	case errors.As(err, &ee):
		r.Exit = ee.ExitCode()
	case err != nil:
		r.Exit, r.Stderr = -1, err.Error()
	}
	return r
}

// providerCheck asks the real provider (default Linux chain: bwrap, then
// Landlock) to confine a write outside the workspace, and runs it if it can.
// Stdout is "unavailable <code>: <message>" or "<backend> <enforcement>".
func providerCheck(ctx context.Context, env Env) Record {
	dir := filepath.Join(env.Base, "provider")
	ws, out := filepath.Join(dir, "ws"), filepath.Join(dir, "out")
	_ = os.MkdirAll(ws, 0o755)
	_ = os.MkdirAll(out, 0o755)
	defer os.RemoveAll(dir)
	p, err := sandbox.NewProvider(sandbox.Config{LauncherPath: env.Runner})
	if err != nil {
		return Record{Kind: "provider", Exit: -1, Stdout: "config error", Stderr: err.Error()}
	}
	ca, err := p.Confine(ctx, []string{env.Probe, "write", filepath.Join(out, "new")}, sandbox.Policy{Mode: sandbox.WorkspaceWrite, WorkspaceRoot: ws})
	var ue *sandbox.UnavailableError
	if errors.As(err, &ue) {
		return Record{Kind: "provider", Exit: -1, Stdout: "unavailable " + ue.Code() + ": " + ue.Error()}
	}
	if err != nil {
		return Record{Kind: "provider", Exit: -1, Stdout: "error", Stderr: err.Error()}
	}
	before, _ := escape.Take(map[string]string{"out": out}, nil)
	r := run(ctx, "provider", ca.Argv...)
	after, _ := escape.Take(map[string]string{"out": out}, nil)
	r.Changed = len(escape.Diff(before, after)) > 0
	r.Stdout = ca.Backend + " " + string(ca.Enforcement) + " | " + r.Stdout
	return r
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
		case "probe":
			if r.Name == "" {
				return g, fmt.Errorf("%s:%d: field name: missing in probe record", name, n)
			}
			g.Results = append(g.Results, ProbeResult{Name: r.Name, Exit: r.Exit, Changed: r.Changed, Stdout: r.Stdout, Stderr: r.Stderr})
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
		return g, fmt.Errorf("%s: no end record (the guest did not finish; %d console lines)", name, n)
	}
	return g, nil
}
