package oracle

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/dshsim/dshsim/harness/replay/isolate"
	"github.com/dshsim/dshsim/harness/replay/recording"
	"github.com/dshsim/dshsim/sandbox"
)

// isolatedName is the name the oracle's child is registered under.
const isolatedName = "dsh-oracle"

// Serve is called from init because Go leaves no other way: the child is
// this same executable re-executed (/proc/self/exe) with a private /tmp, and
// that executable is any command or test binary that links this package,
// whose main the go tool generates; only an init function runs in every one
// of them before main.
func init() { isolate.Serve(isolatedName, serveRuns) }

// DefaultTimeout bounds one pass of upstream's suite (as the first
// generator's scripts did).
const DefaultTimeout = 200 * time.Second

// Options configure a run of upstream's suite.
type Options struct {
	// Settings are the scenario's switches (see [SettingsOf]).
	Settings Settings
	// Timeout bounds each pass (0: DefaultTimeout).
	Timeout time.Duration
	// Stderr receives what the isolated child itself writes (nil: discarded);
	// upstream's output is in the [Outcome]'s files.
	Stderr io.Writer
	// Agent is an agent directory to run instead of the oracle's agent/ (its
	// run.mjs, bin.mjs and cordis.snapshot.yml, node_modules linking the
	// oracle's): harness/callbench runs one with another sandbox provider.
	Agent string
	// Frontend is the front end the scenario runs through: "" (or
	// recording.ACP) the ACP agent under upstream's snapshot suite (run.mjs),
	// recording.Headless the product CLI's headless profile (headless.mjs,
	// see [Oracle.RecordHeadless]), recording.Goal the ACP goal suite
	// (goal.mjs under vitest, see [Oracle.RecordGoal]), recording.JSONRPC the
	// SDK client and server (jsonrpc.mjs, see [Oracle.RecordJSONRPC]).
	Frontend recording.Frontend
}

// Outcome is one pass of upstream's suite over a scenario: what run.mjs
// compared, the way upstream's suite.ts compares.
type Outcome struct {
	// Refresh says the pass rewrote the fixture from the run first.
	Refresh bool
	// StdoutMatch and SessionMatch are run.mjs's verdicts on the normalised
	// stdout and session.jsonl.
	StdoutMatch  bool
	SessionMatch bool
	// ChildMatch is run.mjs's verdict on each child log (session.<n>.jsonl)
	// of a scenario that delegates, by file name.
	ChildMatch map[string]bool
	// NoLog says the scenario's input opens no session (no newSession), so
	// no log is compared, as upstream's suite compares none for a scenario
	// without a model turn: SessionMatch is then true whatever run.mjs
	// said of the header-only fixture (Report keeps its line).
	NoLog bool
	// Report is run.mjs's verdict lines.
	Report []string
	// Files are what run.mjs wrote to PROBE_OUT: stderr.txt, raw-stdout.txt,
	// raw-session.<i>.jsonl, harvest.norm.jsonl and fixture.norm.jsonl (the
	// two normalised logs compared), stdout.norm.jsonl (when stdout differs).
	Files map[string][]byte
	// Duration is the wall time of the pass (never part of a golden).
	Duration time.Duration
}

// RawSession returns the i-th raw session log upstream wrote in the pass
// (times included; run.mjs names it raw-session.<i>.jsonl), and whether
// there is one.
func (o *Outcome) RawSession(i int) ([]byte, bool) {
	b, ok := o.Files["raw-session."+strconv.Itoa(i)+".jsonl"]
	return b, ok
}

// Match reports whether stdout, session.jsonl and every child log matched.
func (o *Outcome) Match() bool {
	for _, ok := range o.ChildMatch {
		if !ok {
			return false
		}
	}
	return o.StdoutMatch && o.SessionMatch
}

// Verdict is "MATCH" (with "no log compared" when NoLog), or "DIFF" and
// what differs.
func (o *Outcome) Verdict() string {
	var diff []string
	if !o.StdoutMatch {
		diff = append(diff, "stdout")
	}
	if !o.SessionMatch {
		diff = append(diff, recording.SessionFile)
	}
	for _, f := range slices.Sorted(maps.Keys(o.ChildMatch)) {
		if !o.ChildMatch[f] {
			diff = append(diff, f)
		}
	}
	switch {
	case len(diff) == 0 && o.NoLog:
		return "MATCH (no session: no log compared)"
	case len(diff) == 0:
		return "MATCH"
	}
	return "DIFF (" + strings.Join(diff, ", ") + ")"
}

// WriteFiles writes the pass's files into dir (made if missing, its
// parents too).
func (o *Outcome) WriteFiles(dir string) error {
	return writeTree(dir, o.Files)
}

// Replay runs upstream's suite over the recording in dir, unchanged:
// upstream replays its model script and compares stdout and session.jsonl
// with the recording. The recording is copied into the run's private /tmp;
// nothing is written in dir, in the oracle or in the host's /tmp.
func (o *Oracle) Replay(ctx context.Context, dir string, opt Options) (*Outcome, error) {
	res, err := o.run(ctx, "", dir, nil, []bool{false}, opt)
	if err != nil {
		return nil, err
	}
	return res.Passes[0], nil
}

// Refresh runs upstream's suite over the recording in dir with its refresh
// path (the recording's model script and input replayed, the fixture
// rewritten from the run), then replays the rewritten recording as a check.
// It returns the rewritten files (session.jsonl, stdout.expected.jsonl) and
// both passes; dir itself is not changed.
func (o *Oracle) Refresh(ctx context.Context, dir string, opt Options) (files map[string][]byte, refresh, check *Outcome, err error) {
	res, err := o.run(ctx, "", dir, nil, []bool{true, false}, opt)
	if err != nil {
		return nil, nil, nil, err
	}
	return res.Files, res.Passes[0], res.Passes[1], nil
}

// request and response cross into and out of the isolated child: one pass
// of upstream's suite.
type request struct {
	Oracle string
	// Name is the scenario's name: upstream's spill root is derived from it.
	Name string
	// Source is a host directory copied as the scenario (may be empty);
	// Files are written over it (relative paths).
	Source string
	Files  map[string][]byte
	// Refresh rewrites the fixture from the run; the rewritten fixture files
	// come back in the response.
	Refresh  bool
	Settings Settings
	Timeout  time.Duration
	// Agent is Options.Agent, absolute ("" is the oracle's agent/).
	Agent string
	// Frontend is Options.Frontend.
	Frontend recording.Frontend
}

type response struct {
	Pass *Outcome
	// Files are the scenario's session.jsonl, its child logs and
	// stdout.expected.jsonl after a refresh.
	Files map[string][]byte
}

// runs is what run returns: each pass, and the fixture files after them.
type runs struct {
	Passes []*Outcome
	Files  map[string][]byte
}

// run runs the passes over the scenario named name: a copy of source (a
// host directory, may be empty) with files written over it; an empty name
// is the source's. Each pass runs in an isolated child of its own, as each
// run of upstream's suite has a machine to itself: what one pass leaves in
// /tmp (a file the script wrote there) is not there for the next. A
// refresh pass's rewritten fixture is the scenario of the passes after it.
func (o *Oracle) run(ctx context.Context, name, source string, files map[string][]byte, passes []bool, opt Options) (*runs, error) {
	share := []string{o.dir}
	agent := ""
	if opt.Agent != "" {
		abs, err := filepath.Abs(opt.Agent)
		if err != nil {
			return nil, err
		}
		agent = abs
		share = append(share, abs)
	}
	if source != "" {
		abs, err := filepath.Abs(source)
		if err != nil {
			return nil, err
		}
		source = abs
		share = append(share, abs)
		if name == "" {
			name = filepath.Base(abs)
		}
	}
	if name == "" || strings.ContainsAny(name, "/\x00") || name == "." || name == ".." {
		return nil, fmt.Errorf("oracle: %q is not a scenario name", name)
	}
	if err := isolate.Available(); err != nil {
		return nil, fmt.Errorf("oracle: upstream writes fixed paths under /tmp (/tmp/dsh-acp-snap-<hash>), so it runs only with a private /tmp: %w", err)
	}
	timeout := opt.Timeout
	if timeout == 0 {
		timeout = DefaultTimeout
	}
	stderr := opt.Stderr
	if stderr == nil {
		stderr = io.Discard
	}
	res := &runs{Files: map[string][]byte{}}
	over := maps.Clone(files)
	for _, refresh := range passes {
		req, err := json.Marshal(request{Oracle: o.dir, Name: name, Source: source, Files: over, Refresh: refresh, Settings: opt.Settings, Timeout: timeout, Agent: agent, Frontend: opt.Frontend})
		if err != nil {
			return nil, err
		}
		out, err := isolate.Run(ctx, isolatedName, req, isolate.Options{Stderr: stderr, Share: share})
		if err != nil {
			return nil, fmt.Errorf("oracle run of %s: %w", name, err)
		}
		var resp response
		if err := json.Unmarshal(out, &resp); err != nil || resp.Pass == nil {
			return nil, fmt.Errorf("oracle run of %s: undecodable response (%v)", name, err)
		}
		res.Passes = append(res.Passes, resp.Pass)
		if over == nil {
			over = map[string][]byte{}
		}
		maps.Copy(over, resp.Files)
		maps.Copy(res.Files, resp.Files)
	}
	return res, nil
}

// serveRuns is the isolated child: /tmp is its own, so upstream's
// /tmp/dsh-subprocess-* and /tmp/dsh-acp-snap-<hash> go with it.
func serveRuns(ctx context.Context, data []byte) ([]byte, error) {
	var req request
	if err := json.Unmarshal(data, &req); err != nil {
		return nil, fmt.Errorf("oracle request: %w", err)
	}
	work, err := os.MkdirTemp("/tmp", "oracle-")
	if err != nil {
		return nil, err
	}
	scen := filepath.Join(work, req.Name)
	if req.Source != "" {
		if err := recording.CopyTree(req.Source, scen); err != nil {
			return nil, fmt.Errorf("copy the scenario %s: %w", req.Source, err)
		}
	}
	if err := writeTree(scen, req.Files); err != nil {
		return nil, err
	}
	facts := inputFacts{session: true} // the JSON-RPC front end has no input.json: one prompt opens a session
	if req.Frontend != recording.JSONRPC {
		input, err := os.ReadFile(filepath.Join(scen, recording.InputFile))
		if err != nil {
			return nil, err
		}
		if facts, err = factsOf(input); err != nil {
			return nil, err
		}
	}
	o := &Oracle{dir: req.Oracle}
	var resp response
	if resp.Pass, err = o.pass(ctx, scen, filepath.Join(work, "out"), req.Refresh, facts, req); err != nil {
		return nil, err
	}
	if req.Refresh {
		resp.Files = map[string][]byte{}
		names := []string{recording.SessionFile, recording.StdoutFile}
		switch req.Frontend {
		case recording.Headless:
			names = headlessFiles
		case recording.Goal:
			names = goalFiles
		case recording.JSONRPC:
			names = append([]string{recording.SessionFile}, jsonrpcFiles...)
		}
		for n := 1; req.Frontend != recording.Headless && req.Frontend != recording.Goal; n++ {
			if _, err := os.Stat(filepath.Join(scen, recording.ChildFile(n))); err != nil {
				break
			}
			names = append(names, recording.ChildFile(n))
		}
		for _, f := range names {
			if resp.Files[f], err = os.ReadFile(filepath.Join(scen, f)); err != nil {
				return nil, err
			}
		}
	}
	return json.Marshal(resp)
}

// verdictLine is one of run.mjs's verdict lines.
var verdictLine = regexp.MustCompile(`^(stdout|session\.jsonl): (MATCH|DIFF)\b|^refreshed |^refresh: `)

// childLine is run.mjs's verdict on a child log.
var childLine = regexp.MustCompile(`^(session\.[1-9][0-9]*\.jsonl): (MATCH|DIFF)$`)

// pass runs run.mjs once (under vitest when the input needs it).
func (o *Oracle) pass(ctx context.Context, scen, out string, refresh bool, in inputFacts, req request) (*Outcome, error) {
	ctx, cancel := context.WithTimeout(ctx, req.Timeout)
	defer cancel()
	args := []string{scen}
	if refresh {
		args = append(args, "--refresh")
	}
	for _, kv := range req.Settings.scenarioEnv() {
		args = append(args, "--env", kv)
	}
	home := filepath.Join(filepath.Dir(out), "home")
	if err := os.MkdirAll(home, 0o755); err != nil {
		return nil, err
	}
	env := o.env(req.Settings, out, home)
	agent, run := o.agentDir(), o.runScript()
	if req.Agent != "" {
		agent, run = req.Agent, filepath.Join(req.Agent, "run.mjs")
	}
	switch req.Frontend {
	case recording.Headless:
		run = filepath.Join(agent, headlessScript)
	case recording.JSONRPC:
		run = filepath.Join(agent, jsonrpcScript)
	}
	var cmd *exec.Cmd
	if (in.vitest && (req.Frontend == "" || req.Frontend == recording.ACP)) || req.Frontend == recording.Goal {
		a, _ := json.Marshal(args)
		// --cache=false: vitest would write its results cache into the oracle.
		cmd = exec.CommandContext(ctx, o.vitest(), "run", "--cache=false", "probe.test.mjs")
		env = append(env, "PROBE_ARGS="+string(a))
		if req.Frontend == recording.Goal {
			env = append(env, "PROBE_SCRIPT=./"+goalScript)
		}
	} else {
		cmd = exec.CommandContext(ctx, o.node(), append([]string{run}, args...)...)
	}
	cmd.Dir, cmd.Env = agent, env
	cmd.WaitDelay = 5 * time.Second
	start := time.Now()
	output, err := cmd.CombinedOutput()
	res := &Outcome{Refresh: refresh, Duration: time.Since(start)}
	sc := bufio.NewScanner(bytes.NewReader(output))
	session := false
	for sc.Scan() {
		line := sc.Text()
		if m := childLine.FindStringSubmatch(line); m != nil {
			res.Report = append(res.Report, line)
			if res.ChildMatch == nil {
				res.ChildMatch = map[string]bool{}
			}
			res.ChildMatch[m[1]] = m[2] == "MATCH"
			continue
		}
		if !verdictLine.MatchString(line) {
			continue
		}
		res.Report = append(res.Report, line)
		res.StdoutMatch = res.StdoutMatch || strings.HasPrefix(line, "stdout: MATCH")
		res.SessionMatch = res.SessionMatch || strings.HasPrefix(line, "session.jsonl: MATCH")
		session = session || strings.HasPrefix(line, "session.jsonl:")
	}
	if !session {
		return nil, fmt.Errorf("upstream's suite gave no verdict for %s (%v; ctx %v):\n%s", filepath.Base(scen), err, ctx.Err(), tail(output, 40))
	}
	res.NoLog = !in.session
	res.SessionMatch = res.SessionMatch || res.NoLog
	if res.Files, err = readTree(out); err != nil {
		return nil, err
	}
	return res, nil
}

// env is the environment of run.mjs: the caller's, without any PROBE_ or DSH_
// variable of its own nor any secret ([sandbox.SecretName]: upstream's
// commands print what they are given, and a recording goes into the tree),
// node 22 first on PATH, HOME an empty directory of the run, the overlay's
// switches and PROBE_OUT.
//
// HOME is the run's own because upstream's hook commands read the caller's
// ~/.bashrc: Node gives a hook's bash a socket for stdin and the executor's
// environment has no SHLVL, so bash takes itself for a remote shell and
// sources the file. Whatever the host's file prints or changes would then
// be in the recording.
func (o *Oracle) env(s Settings, out, home string) []string {
	var env []string
	path := o.nodeBin()
	for _, kv := range os.Environ() {
		k, v, _ := strings.Cut(kv, "=")
		switch {
		case strings.HasPrefix(k, "PROBE_"), strings.HasPrefix(k, "DSH_"), k == "NODE_OPTIONS", k == "FORCE_COLOR", k == "HOME":
		case sandbox.SecretName(k): // upstream's run, and so a recording kept in the tree, never sees a secret
		case k == "PATH":
			path += ":" + v
		default:
			env = append(env, kv)
		}
	}
	env = append(env, "PATH="+path, "HOME="+home, "PROBE_OUT="+out, "NO_COLOR=1")
	return append(env, s.probeEnv()...)
}

func tail(b []byte, lines int) string {
	ls := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(ls) > lines {
		ls = ls[len(ls)-lines:]
	}
	return strings.Join(ls, "\n")
}

// writeTree writes files (relative paths) under dir.
func writeTree(dir string, files map[string][]byte) error {
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		p := filepath.Join(dir, filepath.FromSlash(n))
		if !strings.HasPrefix(p, filepath.Clean(dir)+string(filepath.Separator)) {
			return fmt.Errorf("%s: not a path under %s", n, dir)
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, files[n], 0o644); err != nil {
			return err
		}
	}
	return nil
}

// readTree reads every regular file under dir, keyed by relative path.
func readTree(dir string) (map[string][]byte, error) {
	files := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, de fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && p == dir {
				return nil
			}
			return err
		}
		if !de.Type().IsRegular() {
			return nil
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		files[filepath.ToSlash(rel)], err = os.ReadFile(p)
		return err
	})
	return files, err
}
