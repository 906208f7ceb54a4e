package escape

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"time"
)

// AgentEnv set to "1" makes a test binary whose TestMain checks it an agent
// ([AgentMain]) instead of running its tests.
const AgentEnv = "DSHSIM_ESCAPE_AGENT"

// AgentRequest is one corpus run an agent performs as its own identity.
type AgentRequest struct {
	// Env is where the agent runs: Base must be writable by its identity.
	Env Env
	// Backends are the column names ([NewBackend]).
	Backends []string
	// Attempts are attempt names; empty means the whole corpus, unless
	// Given holds attempts.
	Attempts []string
	// Given are attempts given whole (a test's control program), run after
	// the named ones.
	Given []Attempt
	// Timeout bounds one attempt; Workers is [Config.Workers].
	Timeout time.Duration
	Workers int
}

// Select returns the attempts named, in corpus order, or every attempt when
// names is empty; an unknown name is an error.
func Select(all []Attempt, names []string) ([]Attempt, error) {
	if len(names) == 0 {
		return all, nil
	}
	var out []Attempt
	for _, a := range all {
		if slices.Contains(names, a.Name) {
			out = append(out, a)
		}
	}
	if len(out) != len(names) {
		return nil, fmt.Errorf("unknown attempt among %q", names)
	}
	return out, nil
}

// Run performs req in this process, as its own identity.
func (req AgentRequest) Run(ctx context.Context) ([]Result, error) {
	all, err := Corpus()
	if err != nil {
		return nil, err
	}
	var attempts []Attempt
	if len(req.Attempts) > 0 || len(req.Given) == 0 {
		if attempts, err = Select(all, req.Attempts); err != nil {
			return nil, err
		}
	}
	attempts = append(attempts, req.Given...)
	backends, err := NewBackends(ctx, req.Env, req.Backends)
	if err != nil {
		return nil, err
	}
	defer func() {
		for _, b := range backends {
			b.Close()
		}
	}()
	node, err := NodeFor(attempts)
	if err != nil {
		return nil, err
	}
	cfg := Config{Base: req.Env.Base, Probe: req.Env.Probe, Timeout: req.Timeout, Workers: req.Workers, Node: node,
		Runner: req.Env.Runner, Transcripts: req.Env.Transcripts}
	return RunAll(ctx, cfg, attempts, backends)
}

// AgentMain reads an [AgentRequest] (JSON) from stdin, runs it as this
// process's identity and writes the results (JSON) to stdout. It returns 0,
// or 1 with the error on stderr.
func AgentMain(stdin io.Reader, stdout, stderr io.Writer) int {
	var req AgentRequest
	dec := json.NewDecoder(stdin)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		fmt.Fprintf(stderr, "escape agent: bad request: %v\n", err)
		return 1
	}
	rs, err := req.Run(context.Background())
	if err != nil {
		fmt.Fprintf(stderr, "escape agent (uid %d): %v\n", os.Geteuid(), err)
		return 1
	}
	if err := json.NewEncoder(stdout).Encode(rs); err != nil {
		fmt.Fprintf(stderr, "escape agent: %v\n", err)
		return 1
	}
	return 0
}

// RunAs performs req in a fresh process of exe (a test binary whose TestMain
// hands over to [AgentMain] when [AgentEnv] is set, readable and executable
// by id) running as identity id, with its own scratch directory (a
// subdirectory of req.Env.Base owned by id, also its HOME) and no
// supplementary groups. This process must be root. The agent's commands are
// then confined and checked exactly as a harness run by that user would
// confine and check them: the agent is their parent.
func RunAs(ctx context.Context, exe string, id Identity, req AgentRequest) ([]Result, error) {
	base, err := os.MkdirTemp(req.Env.Base, "agent-"+id.Name+"-")
	if err != nil {
		return nil, err
	}
	if err := os.Chmod(base, 0o755); err != nil {
		return nil, err
	}
	if err := os.Chown(base, id.UID, id.GID); err != nil {
		return nil, err
	}
	req.Env.Base = base
	in, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, exe)
	cmd.Env = []string{AgentEnv + "=1", "HOME=" + base, "LANG=C", "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}
	cmd.Dir = base
	cmd.Stdin = bytes.NewReader(in)
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(id.UID), Gid: uint32(id.GID), Groups: []uint32{}}}
	// Started under the read lock: an exclusive run's descriptor without
	// close-on-exec must not reach the agent.
	exclusive.RLock()
	err = cmd.Start()
	exclusive.RUnlock()
	if err != nil {
		return nil, fmt.Errorf("agent as %s: %w", id.Name, err)
	}
	if err := cmd.Wait(); err != nil {
		return nil, fmt.Errorf("agent as %s (uid %d): %v: %s", id.Name, id.UID, err, strings.TrimSpace(stderr.String()))
	}
	var rs []Result
	if err := json.Unmarshal(out.Bytes(), &rs); err != nil {
		return nil, fmt.Errorf("agent as %s: bad results: %v", id.Name, err)
	}
	for i := range rs {
		if rs[i].Identity != id.Name {
			return nil, fmt.Errorf("agent as %s returned a result of identity %q", id.Name, rs[i].Identity)
		}
	}
	return rs, nil
}
