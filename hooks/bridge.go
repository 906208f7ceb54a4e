package hooks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/pipeline/session"
)

// DefaultStderrSummaryMaxChars caps hook/result's stderrSummary.
const DefaultStderrSummaryMaxChars = 500

// Options are one bridge's plugin options plus how its hooks run.
type Options struct {
	// ConfigPath is the plugin option configPath, as written (required). A
	// relative path resolves against BaseDir.
	ConfigPath string
	// BaseDir is the process launch cwd ("" : this process's cwd); the
	// acp-agent's launch cwd is the workspace.
	BaseDir string
	// PluginRoot and ProjectDir are the Claude Code options substituted into
	// commands (ProjectDir also becomes CLAUDE_PROJECT_DIR); nil when unset.
	PluginRoot, ProjectDir *string
	// Model is the Codex option stamped on every payload ("" in the acp-agent).
	Model string
	// DefaultTimeoutMs is the timeout of a hook without one (nil: 600000).
	// Not validated, as upstream: a value ≤ 0 makes every such hook fail to
	// start (non-blocking).
	DefaultTimeoutMs *float64
	// StderrSummaryMaxChars caps stderrSummary (nil: 500); it must be a
	// positive integer, else Load fails (upstream's one loud failure).
	StderrSummaryMaxChars *float64
	// Strict fails closed where upstream fails open: a config that cannot be
	// loaded (other than a missing file) denies every tool call, and a hook
	// that cannot run (not started, timed out, killed, exit 126/127) blocks
	// its call.
	Strict bool
	// Runtime is how commands run.
	Runtime Runtime
	// Logf receives upstream's logger lines (also kept, see [Bridge.Warnings]).
	Logf func(line string)
}

// Bridge is one dialect's loaded config and its pipeline listeners
// (upstream's hooks-claude-code or hooks-codex plugin).
type Bridge struct {
	d        *Dialect
	opts     Options
	file     string
	cfg      *Config // nil when the file could not be loaded
	loadErr  *ConfigError
	maxChars int
	counter  atomic.Int64 // handler ids: one counter per bridge, bumped by every matched run

	mu       sync.Mutex
	warnings []string

	detached detachedRuns // the lifecycle points' runs (lifecycle.go)
}

// Load reads the dialect's config file once, as the plugin does at load
// time. The error is non-nil only for bad options (a missing ConfigPath, an
// invalid StderrSummaryMaxChars); a file that cannot be used yields a bridge
// that runs nothing and reports why ([Bridge.Status]), unless Strict.
func Load(d *Dialect, opts Options) (*Bridge, error) {
	b := &Bridge{d: d, opts: opts, maxChars: DefaultStderrSummaryMaxChars}
	b.detached.init()
	if c := opts.StderrSummaryMaxChars; c != nil {
		if *c <= 0 || *c != math.Trunc(*c) || math.IsInf(*c, 0) {
			return nil, fmt.Errorf("%s: stderrSummaryMaxChars must be a positive integer", d.Plugin)
		}
		b.maxChars = int(math.Min(*c, math.MaxInt32))
	}
	if opts.ConfigPath == "" {
		return nil, fmt.Errorf("%s: configPath is required", d.Plugin)
	}
	b.file = opts.ConfigPath
	if !filepath.IsAbs(b.file) {
		base := opts.BaseDir
		if base == "" {
			base, _ = os.Getwd()
		}
		b.file = filepath.Join(base, b.file)
	}
	data, err := os.ReadFile(b.file)
	if err == nil {
		b.cfg, err = Parse(d, b.file, data, Substitutions{PluginRoot: opts.PluginRoot, ProjectDir: opts.ProjectDir})
	} else {
		err = &ConfigError{File: b.file, Upstream: nodeIOError(err, opts.ConfigPath), Missing: errors.Is(err, fs.ErrNotExist)}
	}
	if err != nil {
		b.loadErr = err.(*ConfigError)
		b.logf("%s: could not load hook config %q: %s — no hooks registered", d.Plugin, opts.ConfigPath, b.loadErr.Upstream)
		return b, nil
	}
	for _, s := range b.cfg.Skipped {
		b.logf("%s", s.Warning(d))
	}
	return b, nil
}

// nodeIOError renders a read failure as Node's fs error string does
// ("Error: ENOENT: no such file or directory, open './hooks.json'").
func nodeIOError(err error, path string) string {
	var errno syscall.Errno
	var pe *fs.PathError
	if errors.As(err, &errno) && errors.As(err, &pe) {
		return fmt.Sprintf("Error: %s: %s, %s '%s'", unix.ErrnoName(errno), errno.Error(), pe.Op, path)
	}
	return "Error: " + err.Error()
}

func (b *Bridge) logf(format string, args ...any) {
	line := fmt.Sprintf(format, args...)
	b.mu.Lock()
	b.warnings = append(b.warnings, line)
	b.mu.Unlock()
	if b.opts.Logf != nil {
		b.opts.Logf(line)
	}
}

// Dialect returns the bridge's dialect.
func (b *Bridge) Dialect() *Dialect { return b.d }

// Warnings returns upstream's logger lines so far (load failure, skipped
// hooks, ignored updatedInput and systemMessage), in order.
func (b *Bridge) Warnings() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.warnings...)
}

// Status is what a user must be told about a bridge.
type Status struct {
	// Dialect is the bridge's dialect.
	Dialect *Dialect
	// File is the resolved config path.
	File string
	// Err is why the file was not loaded (nil when it was). Err.Missing
	// marks the ordinary "no config" case.
	Err *ConfigError
	// Strict is the switch: a load failure then denies every tool call.
	Strict bool
	// Runnable counts the loaded hooks (of every point).
	Runnable int
	// Notes are things upstream ignores silently (see [Config.Notes]).
	Notes []string
}

// Status returns the bridge's load status.
func (b *Bridge) Status() Status {
	st := Status{Dialect: b.d, File: b.file, Err: b.loadErr, Strict: b.opts.Strict}
	if b.cfg == nil {
		return st
	}
	st.Notes = append(st.Notes, b.cfg.Notes...)
	for _, p := range b.d.Points {
		for _, g := range b.cfg.Groups[p] {
			st.Runnable += len(g.Hooks)
		}
	}
	return st
}

// Problems returns the lines a user must see: a load failure (with file,
// line and field), the strict consequence, and the notes. A missing file is not a problem (it is how hooks are off).
func (st Status) Problems() []string {
	var out []string
	prefix := st.Dialect.Plugin + ": "
	if st.Err != nil && !st.Err.Missing {
		consequence := "none of its hooks run (upstream logs this only to an invisible logger)"
		if st.Strict {
			consequence = "strict: every tool call is refused until it is fixed"
		}
		out = append(out, prefix+"hook config rejected: "+st.Err.Error()+"; "+consequence)
	}
	for _, n := range st.Notes {
		out = append(out, prefix+n)
	}
	return out
}

// Register adds the bridge's listeners to reg (appended: inside the ones
// already registered) and returns their removal. Register the Claude Code
// bridge before the Codex one, as upstream does.
func (b *Bridge) Register(reg *pipeline.Registry) (remove func()) {
	rmPre := reg.OnPreExecute(b.PreExecute)
	rmPost := reg.OnPostExecute(b.PostExecute)
	return func() { rmPre(); rmPost() }
}

// PreExecute is the tools/pre-execute listener: it runs every matching
// PreToolUse hook, then denies, asks (Claude Code) or calls next.
func (b *Bridge) PreExecute(ctx context.Context, call *pipeline.Call, next func() (pipeline.Decision, error)) (pipeline.Decision, error) {
	if b.cfg == nil {
		if b.opts.Strict && !b.loadErr.Missing {
			return pipeline.Deny(fmt.Sprintf("%s: the hook config %s could not be loaded (%s); strict hooks refuse every tool call until it is fixed", b.d.Plugin, b.file, b.loadErr.Upstream)), nil
		}
		return next()
	}
	m, err := b.runPoint(ctx, PreToolUse, call, nil)
	if err != nil {
		return pipeline.Decision{}, err
	}
	if d, decided := preDecision(b.d, m); decided {
		return d, nil
	}
	return next()
}

// PostExecute is the tools/post-execute listener: it runs every matching
// PostToolUse hook (denials included), then blocks or calls next, adding
// the hooks' context message.
func (b *Bridge) PostExecute(ctx context.Context, call *pipeline.Call, res pipeline.Result, next func() (pipeline.PostDecision, error)) (pipeline.PostDecision, error) {
	if b.cfg == nil {
		return next()
	}
	m, err := b.runPoint(ctx, PostToolUse, call, &res)
	if err != nil {
		return pipeline.PostDecision{}, err
	}
	return postDecision(b.d, m, next)
}

// runPoint runs the matching hooks of point for call, serially, each
// logged as an invoked/result pair, and merges their outputs. Its only
// error is a session log that cannot be read or appended to.
func (b *Bridge) runPoint(ctx context.Context, point Point, call *pipeline.Call, res *pipeline.Result) (merged, error) {
	facts := callFacts{ToolName: call.Name(), CallID: call.CallID(), Args: call.Args()}
	if res != nil {
		text := res.Text()
		facts.Response = &text
	}
	return b.run(ctx, point, call.Agent(), call.Name(), facts)
}

// run runs the hooks of point whose matcher selects subject (a tool name;
// "" for the turn points, whose matcher is discarded) for agent's session,
// with the payload of facts (the session's part filled in here), serially,
// each logged as an invoked/result pair, and merges their outputs.
func (b *Bridge) run(ctx context.Context, point Point, agent *pipeline.Agent, subject string, facts callFacts) (merged, error) {
	pr, err := b.prepare(point, agent, subject, facts, true)
	if err != nil || pr == nil {
		return merged{}, err
	}
	return pr.exec(ctx, "")
}

// pointRun is one point's matching hooks, ready to run for one session.
type pointRun struct {
	b     *Bridge
	point Point
	jobs  []job
	sc    scope
	stdin []byte
	env   []string
}

// job is one matching hook and its group.
type job struct {
	g *Group
	h Hook
}

// prepare selects the hooks of point whose matcher selects subject and
// fills the payload's session part from agent; nil when none matches.
// logged reads the session's last turn, under which each run is logged (a
// lifecycle point has no turn and logs nothing).
func (b *Bridge) prepare(point Point, agent *pipeline.Agent, subject string, facts callFacts, logged bool) (*pointRun, error) {
	var jobs []job
	for i := range b.cfg.Groups[point] {
		g := &b.cfg.Groups[point][i]
		if g.match.matches(subject) {
			for _, h := range g.Hooks {
				jobs = append(jobs, job{g, h})
			}
		}
	}
	if len(jobs) == 0 {
		return nil, nil
	}
	sc, err := b.scope(agent, logged)
	if err != nil {
		return nil, err
	}
	facts.SessionID, facts.TranscriptPath, facts.Cwd, facts.Turn, facts.Model = sc.sessionID, sc.transcript, sc.cwd, sc.turn, b.opts.Model
	return &pointRun{b: b, point: point, jobs: jobs, sc: sc, stdin: payload(b.d, point, facts),
		env: environment(b.parentEnv(), b.d, b.projectDir(sc))}, nil
}

// nextID takes the bridge's next handler id for point: one counter across
// every point, as upstream's module-level counter.
func (b *Bridge) nextID(point Point) string {
	return fmt.Sprintf("%s:%s:%d", b.d.Name, point, b.counter.Add(1))
}

// exec runs the hooks in order, the first under first when it is not ""
// (an id taken before), each later one under the next id as it starts, and
// merges their outputs.
func (pr *pointRun) exec(ctx context.Context, first string) (merged, error) {
	b, point, sc := pr.b, pr.point, pr.sc
	defaultMs := float64(DefaultTimeoutMs)
	if b.opts.DefaultTimeoutMs != nil {
		defaultMs = *b.opts.DefaultTimeoutMs
	}
	outs := make([]output, 0, len(pr.jobs))
	for i, j := range pr.jobs {
		id := first
		if i > 0 || id == "" {
			id = b.nextID(point)
		}
		if sc.log != nil {
			if _, err := sc.log.Append(session.KindHookInvoked, invokedData{Turn: sc.turn, Point: point, Dialect: b.d.Name, HandlerID: id, Matcher: j.g.Matcher}); err != nil {
				return merged{}, fmt.Errorf("%s: append %s: %w", b.d.Plugin, session.KindHookInvoked, err)
			}
		}
		start := time.Now()
		s := b.opts.Runtime.run(ctx, j.h, defaultMs, pr.stdin, sc.dir, pr.env)
		o := decode(point, s.exitCode, s.stdout, s.stderr)
		if point.plainContext() && b.d.plainStdoutContext {
			o.plainContext(s.exitCode, s.stdout)
		}
		if detail, failed := s.cannotRun(); failed && b.opts.Strict && point.strictBlocks() && ctx.Err() == nil && rank(o.decision) < 3 {
			o = output{decision: "block", reason: fmt.Sprintf("hook %s could not run: %s; strict hooks fail closed", id, detail)}
		}
		duration := float64(time.Since(start).Nanoseconds()) / 1e6
		if o.updatedInput && b.d.warnsUpdatedInput {
			b.logf("%s: %s hook requested updatedInput, which is not yet honored (ignored)", b.d.Plugin, point)
		}
		if o.systemMessage != "" {
			b.logf("%s: %s hook emitted a systemMessage, which is not yet surfaced (ignored)", b.d.Plugin, point)
		}
		if sc.log != nil {
			r := resultData{Turn: sc.turn, Point: point, HandlerID: id, Decision: o.logged(), ExitCode: s.exitCode,
				StderrSummary: summary(s.stderr, b.maxChars), DurationMs: duration}
			if _, err := sc.log.Append(session.KindHookResult, r); err != nil {
				return merged{}, fmt.Errorf("%s: append %s: %w", b.d.Plugin, session.KindHookResult, err)
			}
		}
		outs = append(outs, o)
	}
	return merge(outs), nil
}

// invokedData is hook/invoked's data, fields in upstream's order.
type invokedData struct {
	Turn      int     `json:"turn"`
	Point     Point   `json:"point"`
	Dialect   string  `json:"dialect"`
	HandlerID string  `json:"handlerId"`
	Matcher   *string `json:"matcher,omitempty"`
}

// resultData is hook/result's data, fields in upstream's order.
type resultData struct {
	Turn          int     `json:"turn"`
	Point         Point   `json:"point"`
	HandlerID     string  `json:"handlerId"`
	Decision      string  `json:"decision"`
	ExitCode      *int    `json:"exitCode,omitempty"`
	StderrSummary string  `json:"stderrSummary,omitempty"`
	DurationMs    float64 `json:"durationMs"`
}

// scope is what one call's session says.
type scope struct {
	log        *session.Log // nil: nothing is logged (no session, or no turn)
	sessionID  string
	transcript string
	cwd        string // payload cwd: header cwd, else the process cwd
	dir        string // where the hook runs: header cwd, else Runtime.DefaultDir
	sessionCwd string // header cwd ("" without one)
	turn       int
}

// scope reads what agent's session says; logged: also its last turn, under
// which the runs are logged (none before the first turn/start).
func (b *Bridge) scope(agent *pipeline.Agent, logged bool) (scope, error) {
	wd, _ := os.Getwd()
	sc := scope{cwd: wd, dir: b.opts.Runtime.DefaultDir}
	if sc.dir == "" {
		sc.dir = wd
	}
	if agent == nil || agent.Session == nil {
		return sc, nil
	}
	log := agent.Session
	h := log.Header()
	sc.sessionID, sc.transcript = h.ID, log.Path()
	if h.Cwd != "" {
		sc.cwd, sc.dir, sc.sessionCwd = h.Cwd, h.Cwd, h.Cwd
	}
	if !logged {
		return sc, nil
	}
	events, err := log.Events()
	if err != nil {
		return sc, fmt.Errorf("%s: read the session log: %w", b.d.Plugin, err)
	}
	if e, ok := session.Last(events, session.KindTurnStart); ok {
		var d session.TurnStart
		if err := json.Unmarshal(e.Data, &d); err != nil {
			return sc, fmt.Errorf("%s: session log seq %d: turn/start data: %w", b.d.Plugin, e.Seq, err)
		}
		sc.turn, sc.log = d.Turn, log
	}
	return sc, nil
}

// projectDir is CLAUDE_PROJECT_DIR: the ProjectDir option, else the session cwd.
func (b *Bridge) projectDir(sc scope) string {
	if b.opts.ProjectDir != nil {
		return *b.opts.ProjectDir
	}
	return sc.sessionCwd
}

func (b *Bridge) parentEnv() []string {
	if b.opts.Runtime.Env != nil {
		return b.opts.Runtime.Env
	}
	return os.Environ()
}
