package replay

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/dshsim/dshsim/harness/replay/acpwire"
	"github.com/dshsim/dshsim/harness/replay/fileset"
	"github.com/dshsim/dshsim/harness/replay/isolate"
	"github.com/dshsim/dshsim/harness/replay/projection"
	"github.com/dshsim/dshsim/harness/replay/recording"
	"github.com/dshsim/dshsim/harness/replay/toolschema"
	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/pipeline/session"
	"github.com/dshsim/dshsim/sandbox"
	"github.com/dshsim/dshsim/sandbox/inproc"
	"github.com/dshsim/dshsim/sandbox/outfile"
	"github.com/dshsim/dshsim/stack"
	"github.com/dshsim/dshsim/tools/subagent"
)

// Verdicts of one recording.
const (
	// Match: every projected event matched and nothing was flagged.
	Match = "match"
	// Mismatch: the replay ran but differs from the recording (or a flag was raised).
	Mismatch = "mismatch"
	// Failed: the recording could not be replayed (bad recording, stack failure).
	Failed = "error"
)

// ModelName names the model every replay uses: it is constructed from the
// recording, not a live model; ModelProvider is its provider in our log.
const (
	ModelName     = "constructed from the recording (dsh-replay script)"
	ModelProvider = "dsh-replay"
)

// notModelledSystem is the system prompt our replay log names: the stack is
// composed, upstream's application prompt is not.
const notModelledSystem = "(not modelled: dsh-replay composes the tool stack, not upstream's system prompt)"

// Options configure one replay.
type Options struct {
	// Refresh names the model as the recording does (its request header's
	// config, provider and model) instead of as constructed, so that our log
	// can be written back as the recording's (dsh-replay -refresh).
	Refresh bool `json:",omitempty"`
	// LogDir keeps our replayed logs as <LogDir>/<name>.session.jsonl,
	// making LogDir when missing but never its parents; when empty the log
	// lives and dies with the replay's private /tmp.
	LogDir string
	// Timeout bounds one recording's replay (0: 2 minutes).
	Timeout time.Duration
	// SandboxChain overrides the sandbox backend chain (e.g. ["landlock"]);
	// nil keeps the platform chain (or the recording's sandboxBackend setting).
	SandboxChain []string `json:",omitempty"`
	// LauncherPath is the landlock-run binary ("" = beside the executable).
	LauncherPath string `json:",omitempty"`
	// Ripgrep is the rg glob and grep run ("": $DSHSIM_RIPGREP when set,
	// else rg on PATH, Debian's); see ripgrep.go.
	Ripgrep string `json:",omitempty"`
	// StrictHooks fails closed where upstream's hooks fail open (a hook
	// config that cannot be loaded, a hook that cannot run).
	StrictHooks bool `json:",omitempty"`
	// TmpSize bounds the replay's private /tmp in bytes (0:
	// isolate.DefaultTmpSize).
	TmpSize int64 `json:",omitempty"`
	// Bounds are the contained replay's resource bounds (zero fields:
	// isolate.DefaultBounds).
	Bounds isolate.Bounds
	// Seed bounds the workspace seed (zero fields: the defaults).
	Seed recording.SeedBounds
	// Recording bounds the recording's files (zero fields: the defaults);
	// the contained replay's response is bounded by eight times
	// Recording.MaxBytes (see maxResponse).
	Recording recording.Bounds
	// Trusted replays on the host, uncontained, where no contained child
	// can be made (without it such a replay fails); where one can, the
	// replay is contained all the same.
	Trusted bool `json:",omitempty"`
	// Stderr receives what the isolated replay writes to its stdout and
	// stderr (nil: os.Stderr); never part of a report.
	Stderr io.Writer `json:"-"`
}

// timeout is the bound of one recording's replay.
func (o Options) timeout() time.Duration {
	if o.Timeout == 0 {
		return 2 * time.Minute
	}
	return o.Timeout
}

// Result is the outcome of replaying one recording.
type Result struct {
	// Name is the recording name; Dir its directory.
	Name string `json:"name"`
	Dir  string `json:"dir"`
	// Verdict is Match, Mismatch or Failed.
	Verdict string `json:"verdict"`
	// Error is the reason of a Failed verdict (a bad recording names file, line and field).
	Error string `json:"error,omitempty"`
	Stated
	// Comparison is the per-turn comparison of the projections.
	Comparison projection.Comparison `json:"comparison"`
	// Children are the child sessions' comparisons, in upstream's order
	// (session.<n>.jsonl), each naming the session and call that started
	// it: a report nests them under that call.
	Children []*ChildResult `json:"children,omitempty"`
	// Flags are script and answer problems (an exhausted script, unconsumed
	// replies, an answer kind that was not offered, a stale projection file).
	Flags []string `json:"flags,omitempty"`
	// Notes are informational (leftover permission answers, constructed pieces).
	Notes []string `json:"notes,omitempty"`
	// Served names every tool whose body this replay served from the
	// recording instead of running it (a body that needs the network or a
	// program this machine lacks), each once, sorted; empty when every tool
	// ran for real. The driver fills it; the text, JSON, HTML and JUnit
	// reports show it.
	Served []string `json:"served,omitempty"`
	// LogPath is our replayed log when kept (Options.LogDir).
	LogPath string `json:"log,omitempty"`
	Projections
	// Duration is the wall time of the replay (never part of a golden).
	Duration time.Duration `json:"-"`
	// run is what a refresh writes back (set in the isolated child).
	run *runFacts
}

// Stated is what the recording stated and where the replay ran: its front
// end, its policy, its settings, the containment.
type Stated struct {
	// Frontend is the front end of a recording beyond ACP (headless,
	// jsonrpc, ...; "" for ACP's): the reports name it.
	Frontend string `json:"frontend,omitempty"`
	// Mode and Approval are the settings the recording stated.
	Mode     string `json:"mode,omitempty"`
	Approval string `json:"approval,omitempty"`
	// Settings lists what came from dshsim.replay.json (empty when the recording needed none).
	Settings string `json:"settings,omitempty"`
	// Contained says what the contained replay could see and do of the
	// host (isolate.Containment: its root's entries, its ids and
	// privileges, its network, its bounds); empty for a replay that did
	// not start contained.
	Contained string `json:"contained,omitempty"`
}

// Projections are both projections a verdict compares.
type Projections struct {
	// Got is our projection (normalised), Expected the recording's.
	Expected []projection.Item `json:"-"`
	Got      []projection.Item `json:"-"`
}

// runFacts are the facts of one run a refresh or a recording needs: the
// frames the bridge sent, and our session's id and cwd (to tokenize them).
type runFacts struct {
	Frames    []acpwire.Frame
	SessionID string
	Cwd       string
	// Children are our logs of the children bound to recorded ones (a
	// refresh writes them back as session.<n>.jsonl).
	Children []childFacts
}

// childFacts is our log of the child bound to recorded child Index.
type childFacts struct {
	Index     int
	SessionID string
	Log       []byte
}

// decide is the verdict of a replay that ran: a match when every projected
// event matched, nothing was flagged and every child session matched.
func (r *Result) decide() string {
	if matched(r.Comparison, r.Flags) && !r.childMismatch() {
		return Match
	}
	return Mismatch
}

// matched reports whether a comparison matched every event and nothing was
// flagged.
func matched(c projection.Comparison, flags []string) bool {
	return c.Mismatched == 0 && c.Matched == c.Total && len(flags) == 0
}

// childMismatch reports whether a child session mismatched.
func (r *Result) childMismatch() bool {
	for _, c := range r.Children {
		if c.Verdict != Match {
			return true
		}
	}
	return false
}

// Summary is one line: "<name>: match 8/8" or the reason; a recording
// with child sessions counts their events too and says how many.
func (r *Result) Summary() string {
	matched, total := r.Comparison.Matched, r.Comparison.Total
	for _, c := range r.Children {
		matched += c.Comparison.Matched
		total += c.Comparison.Total
	}
	kids := ""
	if n := len(r.Children); n > 0 {
		kids = fmt.Sprintf(" (%d session(s) and %d child session(s))", 1, n)
	}
	switch r.Verdict {
	case Failed:
		return fmt.Sprintf("%s: error: %s", r.Name, r.Error)
	case Match:
		return fmt.Sprintf("%s: match %d/%d events%s", r.Name, matched, total, kids)
	}
	s := fmt.Sprintf("%s: MISMATCH %d/%d events matched%s", r.Name, matched, total, kids)
	if len(r.Flags) > 0 {
		s += "; " + strings.Join(r.Flags, "; ")
	}
	return s
}

// FirstDifference is why the recording did not match, in one line: the error
// of a recording that could not be replayed, else the first mismatching event
// (turn, event and its first differing field), else the first flag; empty
// for a match. The JUnit failure message and the HTML summary show it.
func (r *Result) FirstDifference() string {
	switch r.Verdict {
	case Match:
		return ""
	case Failed:
		return strings.ReplaceAll(r.Error, "\n", " ")
	}
	if p := r.Comparison.First(); p != nil {
		s := fmt.Sprintf("turn %d, %s", p.Turn, p.Label())
		if len(p.Diffs) > 0 {
			s += ": " + p.Diffs[0].String()
		}
		if n := len(p.Diffs) - 1; n > 0 {
			s += fmt.Sprintf(" (and %d more field%s)", n, plural(n))
		}
		return s
	}
	if len(r.Flags) > 0 {
		return "flag: " + r.Flags[0]
	}
	for _, c := range r.Children {
		if p := c.Comparison.First(); p != nil {
			s := fmt.Sprintf("%s: turn %d, %s", c.File, p.Turn, p.Label())
			if len(p.Diffs) > 0 {
				s += ": " + p.Diffs[0].String()
			}
			return s
		}
		if len(c.Flags) > 0 {
			return c.File + ": flag: " + c.Flags[0]
		}
	}
	return ""
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// Detail renders the first mismatch as readable lines (empty on a match):
// the session's, then each child's that mismatched.
func (r *Result) Detail() string {
	var b strings.Builder
	if p := r.Comparison.First(); p != nil {
		fmt.Fprintf(&b, "  first difference: turn %d, %s\n", p.Turn, p.Label())
		for _, d := range p.Diffs {
			fmt.Fprintf(&b, "    %s\n", d.String())
		}
	}
	for _, f := range r.Flags {
		fmt.Fprintf(&b, "  flag: %s\n", f)
	}
	for _, c := range r.Children {
		if p := c.Comparison.First(); p != nil {
			fmt.Fprintf(&b, "  %s: first difference: turn %d, %s\n", c.File, p.Turn, p.Label())
			for _, d := range p.Diffs {
				fmt.Fprintf(&b, "    %s\n", d.String())
			}
		}
		for _, f := range c.Flags {
			fmt.Fprintf(&b, "  %s: flag: %s\n", c.File, f)
		}
	}
	return b.String()
}

// SpillRoot is the spill root of a recording: /tmp/dsh-acp-snap-<sha256(name)[:9]>,
// the same length as upstream's so spill previews get the same budget.
func SpillRoot(name string) string {
	sum := sha256.Sum256([]byte(name))
	return "/tmp/dsh-acp-snap-" + hex.EncodeToString(sum[:])[:9]
}

// replayHere replays the recording in dir in this process (the isolated
// child) and returns the result and our log.
func replayHere(ctx context.Context, dir string, opt Options) (*Result, []byte) {
	res := &Result{Name: filepath.Base(filepath.Clean(dir)), Dir: dir}
	log, err := replay(ctx, dir, opt, res)
	if err != nil {
		res.Verdict, res.Error = Failed, err.Error()
		return res, log
	}
	res.Verdict = res.decide()
	return res, log
}

// replay replays the recording in dir into res and returns our log: what
// the replay wrote to its session, read once the stack has closed (nil when
// the replay failed before its log existed).
func replay(ctx context.Context, dir string, opt Options, res *Result) ([]byte, error) {
	// A writer replaces the recording's files under the directory's lock,
	// all at once (package fileset): the replay reads them under the shared
	// one, and refuses a set an interrupted writer left half replaced.
	release, err := fileset.Shared(dir)
	if err != nil {
		return nil, err
	}
	defer release()
	p, err := prepare(dir, opt.Recording, res)
	if err != nil {
		return nil, err
	}
	timeout := opt.timeout()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	sc, err := newScratch(p.rec, opt.Seed)
	if err != nil {
		return nil, err
	}
	defer sc.remove()
	err = p.run(ctx, sc, opt, timeout, res)
	return sc.ourLog(), err
}

// prepared is what a replay reads from the recording before anything runs.
type prepared struct {
	rec       *recording.Recording
	script    *recording.Script
	pol       recording.Policy
	toolsMode string
	// delegates composes delegation (upstream's default composition has
	// it; a tool pin without subagent says the recording's had not).
	delegates bool
	// expected is the recording's projection, coverage what of its log
	// that projection compares.
	expected []projection.Item
	coverage projection.Coverage
}

// prepare loads the recording in dir within b, derives the constructed
// model's script, and sets res's settings, the recording's projection and
// the notes and flags that need nothing run.
func prepare(dir string, b recording.Bounds, res *Result) (*prepared, error) {
	rec, err := recording.LoadBounded(dir, b)
	if err != nil {
		return nil, err
	}
	script, err := recording.Derive(rec)
	if err != nil {
		return nil, err
	}
	pol, err := rec.Policy()
	if err != nil && standalone(rec.Settings.Profile) && !rec.HasRuntimeContext() {
		// upstream's standalone overlays compose no policy plugins: the
		// commands run unconfined and no runtime context is ever logged
		pol, err = recording.Policy{Mode: string(sandbox.DangerFullAccess), Approval: stack.ApprovalNever}, nil
		res.Notes = append(res.Notes, standaloneNote(rec.Settings.Profile))
	}
	if err != nil && unguarded(rec) {
		pol, err = recording.Policy{Mode: string(sandbox.DangerFullAccess), Approval: stack.ApprovalNever}, nil
		res.Notes = append(res.Notes, unguardedNote(rec.Frontend))
	}
	if err != nil {
		if len(script.Replies) > 0 || rec.HasRuntimeContext() {
			return nil, err
		}
		// a session without a model call (a handshake) states no policy:
		// upstream's default profile applies, and nothing runs under it
		pol = recording.Policy{Mode: string(sandbox.DangerFullAccess), Approval: stack.ApprovalNever}
		res.Notes = append(res.Notes, "the recording makes no model call and states no policy: upstream's default profile (danger-full-access, approval never) is assumed")
	}
	res.Mode, res.Approval = pol.Mode, pol.Approval
	if rec.Frontend != recording.ACP {
		res.Frontend = string(rec.Frontend)
	}
	res.Notes = append(res.Notes, webNotes(rec)...)
	if rec.PromptFromLog {
		res.Notes = append(res.Notes, fmt.Sprintf("%s: no input.json and no prompt setting for a scenario of this name: the prompt is the log's one user message (the SDK sends one), and the composition the front end's default", rec.Frontend))
	}
	toolsMode, toolsNote := rec.ToolsMode()
	if (rec.Settings.Profile == recording.ProfileAdvanced || rec.Settings.Profile == recording.ProfileSingleExe) && rec.ToolSchemas == nil && toolsMode != stack.ToolsCode {
		toolsMode, toolsNote = stack.ToolsBoth, "tools mode both: the advanced overlay's (EX/advanced.cordis.snapshot.yml tools.mode both)"
	}
	if toolsNote != "" {
		res.Notes = append(res.Notes, toolsNote)
	}
	res.Settings = settingsLine(rec)
	expected, cov, err := projectLog(rec, rec.Events, normalizer(rec, rec.Header.Cwd, rec.Header.ID))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(rec.Name, rec.LogFile), err)
	}
	res.Expected = expected
	if stale, err := checkProjectionFile(rec, expected); err != nil {
		return nil, err
	} else if stale != "" {
		res.Flags = append(res.Flags, stale)
	}
	return &prepared{rec: rec, script: script, pol: pol, toolsMode: toolsMode, expected: expected, coverage: cov, delegates: delegates(rec, toolsMode)}, nil
}

// delegates reports whether the recording's composition delegates:
// upstream's default composition does, unless its tool pin lists the
// tools a native or both mode offers without subagent.
func delegates(rec *recording.Recording, toolsMode string) bool {
	if rec.Settings.Profile == recording.ProfileMinimal {
		return false // the minimal overlay mounts no tool-subagent
	}
	if rec.ToolSchemas == nil || toolsMode == stack.ToolsCode {
		return true
	}
	for _, t := range rec.ToolSchemas.Initial {
		if t.Name == "subagent" {
			return true
		}
	}
	return false
}

// settingsLine says where the recording's settings come from and what they
// are ("" when it needs none).
func settingsLine(rec *recording.Recording) string {
	switch {
	case rec.HasSettings:
		b, _ := json.Marshal(rec.Settings)
		return recording.SettingsFile + " " + string(b)
	case rec.SuiteSettings:
		b, _ := json.Marshal(rec.Settings)
		return "upstream's suite settings for " + rec.Name + " (no " + recording.SettingsFile + ") " + string(b)
	}
	return ""
}

// scratch is a replay's workspace and session log. /tmp is this replay's
// own (package isolate): the workspace is spelled like upstream's
// (/tmp/acp-snap-cwd-XXXXXX, the same length), the spill root is upstream's
// fixed path, and everything goes with the namespace.
type scratch struct {
	ws, logDir, logPath string
	sessionID           string
	log                 *session.Log
}

// newScratch makes the workspace, seeded from the recording's under bounds,
// and opens a fresh session log; on failure it leaves nothing behind.
func newScratch(rec *recording.Recording, bounds recording.SeedBounds) (*scratch, error) {
	ws, err := outfile.Mkdtemp("/tmp", "acp-snap-cwd-")
	if err != nil {
		return nil, err
	}
	sc := &scratch{ws: ws, sessionID: newUUID()}
	if rec.Workspace != "" {
		if err := recording.CopySeed(rec.Workspace, ws, bounds); err != nil {
			sc.remove()
			return nil, fmt.Errorf("seed workspace: %w", err)
		}
		if err := recording.RestoreLinks(ws, rec.Links); err != nil {
			sc.remove()
			return nil, fmt.Errorf("restore the seed's symlinks: %w", err)
		}
	}
	if err := prepareWorkspace(rec.Settings.Prepare, ws); err != nil {
		sc.remove()
		return nil, fmt.Errorf("prepare the workspace (%s): %w", rec.Settings.Prepare, err)
	}
	if sc.logDir, err = outfile.Mkdtemp("/tmp", "acp-snap-sessions-"); err != nil {
		sc.remove()
		return nil, err
	}
	sc.logPath = filepath.Join(sc.logDir, rec.Name+".session.jsonl")
	if sc.log, err = session.Create(sc.logPath, session.Header{ID: sc.sessionID, CreatedAt: time.Now().UnixMilli(), Cwd: ws}); err != nil {
		sc.remove()
		return nil, err
	}
	return sc, nil
}

// ourLog is the session log as written so far (nil when it cannot be read).
func (sc *scratch) ourLog() []byte {
	if sc.log == nil {
		return nil
	}
	data, err := os.ReadFile(sc.logPath)
	if err != nil {
		return nil
	}
	return data
}

// remove closes the log and removes the scratch directories.
func (sc *scratch) remove() {
	if sc.log != nil {
		sc.log.Close()
	}
	if sc.logDir != "" {
		os.RemoveAll(sc.logDir)
	}
	os.RemoveAll(sc.ws)
}

// run replays the script through a stack composed for the recording, in
// sc, and fills res with the comparison, flags and notes; the stack is
// closed when it returns.
func (p *prepared) run(ctx context.Context, sc *scratch, opt Options, timeout time.Duration, res *Result) error {
	rec := p.rec
	wire := &bridge{}
	ans := &answers{queue: append([]recording.Answer(nil), rec.Input.PermissionAnswers...), wire: wire, ui: standingAnswer(rec)}
	cfg, notes := p.stackConfig(sc, opt)
	res.Notes = append(res.Notes, notes...)
	info := constructedInfo()
	if opt.Refresh {
		info = recordedInfo(rec)
	}
	run, err := startSession(ctx, sessionSetup{rec: rec, cfg: cfg, ws: sc.ws, logDir: sc.logDir, log: sc.log, sessionID: sc.sessionID,
		script: p.script, info: info, route: recordedInfo(rec), answers: ans, wire: wire, delegation: p.delegates})
	if err != nil {
		return fmt.Errorf("stack for %s (%s/%s): %w", rec.Name, p.pol.Mode, p.pol.Approval, err)
	}
	defer run.close()
	st := run.stack
	res.Served = st.Served()
	slices.Sort(res.Served)
	if err := p.checkComposed(st); err != nil {
		return err
	}
	for _, r := range st.HookReports() {
		// Name the recording's file, not our temporary copy of it.
		res.Notes = append(res.Notes, strings.ReplaceAll(r, sc.ws, filepath.Join(rec.Dir, "workspace")))
	}
	if err := run.client.run(ctx); err != nil {
		return err
	}
	res.run = &runFacts{Frames: ans.sent(), SessionID: sc.sessionID, Cwd: sc.ws}
	if err := p.review(ctx, timeout, run, ans, res); err != nil {
		return err
	}
	if len(rec.Events) == 0 {
		// upstream's suite compares no log for a scenario without a model
		// turn (its fixture is the header alone): only stdout counts
		res.Notes = append(res.Notes, recording.SessionFile+" holds only its header: upstream's suite compares no log for this scenario (no model turn); our log is not compared, the stdout frames are")
		return nil
	}
	got, ours, err := p.project(sc)
	if err != nil {
		return err
	}
	res.Notes = append(res.Notes, coverageNotes(rec.LogFile, p.coverage, ours)...)
	res.Got = got
	if err := p.frontendReview(sc, res); err != nil {
		return err
	}
	var note string
	res.Comparison, note = p.compare(got)
	if note != "" {
		res.Notes = append(res.Notes, note)
	}
	if err := p.compareChildren(run, res); err != nil {
		return err
	}
	if opt.Refresh {
		return p.keepChildLogs(run, res.run)
	}
	return nil
}

// stackConfig is the stack's configuration for the recording: its policy
// and settings, in sc. A setting of the recording's that overrides the
// run's option (the sandbox chain, the landlock runner) is a note.
func (p *prepared) stackConfig(sc *scratch, opt Options) (stack.Config, []string) {
	rec, set := p.rec, p.rec.Settings
	var notes []string
	chain := opt.SandboxChain
	if b := set.SandboxBackend; b != "" {
		if len(chain) > 0 && (len(chain) != 1 || chain[0] != b) {
			notes = append(notes, fmt.Sprintf("%s pins sandboxBackend %q over the run's backend chain %v", recording.SettingsFile, b, chain))
		}
		chain = []string{b}
	}
	launcher := opt.LauncherPath
	// A recording that names a runner (upstream's missing runner) is one of
	// the runner: the Landlock backend runs it, not the in-process path.
	pinned := set.Runner(sc.ws) != ""
	if r := set.Runner(sc.ws); r != "" {
		if launcher != "" && launcher != r {
			notes = append(notes, fmt.Sprintf("%s pins landlockRunner %q over the run's %q", recording.SettingsFile, set.LandlockRunner, launcher))
		}
		launcher = r
	}
	promote := false // the recordings' version kills a foreground command at its timeout
	cfg := stack.Config{
		Workspace: sc.ws,
		Log:       sc.log,
		Mode:      sandbox.Mode(composedPolicy(rec, p.pol).Mode),
		Approval:  stackApproval(composedPolicy(rec, p.pol).Approval),
		SandboxConfig: stack.SandboxConfig{
			SandboxChain:   chain,
			LauncherPath:   launcher,
			LandlockRunner: pinned,
			LandlockABICap: valueOr0(set.LandlockABI),
		},
		Spill: stack.SpillConfig{Root: SpillRoot(rec.Name), MaxInlineBytes: set.SpillMaxInlineBytes},
		Hooks: stack.HooksConfig{Dir: sc.ws, Strict: opt.StrictHooks}, // the launch cwd: workspace/hooks.json and codex-hooks.json load from it
		ToolOptions: stack.ToolOptions{
			Bash:      stack.BashConfig{Timeout: time.Duration(set.BashTimeoutMs) * time.Millisecond, PromoteOnTimeout: &promote},
			Jobs:      stack.JobsConfig{MaxConcurrentPerOwner: valueOr0(set.MaxConcurrentJobsPerOwner)},
			Files:     stack.FilesConfig{DiffBasisMaxBytes: set.DiffBasisMaxBytes},
			ToolsMode: p.toolsMode,
		},
	}
	if set.SessionQuery {
		cfg.SessionQuery = &stack.SessionQueryConfig{Store: sc.logDir} // the replay's sessions: its own
	}
	notes = append(notes, p.profileConfig(&cfg, sc.ws)...)
	if cfg.FileSearch != nil {
		cfg.FileSearch.Rg = opt.Ripgrep
		notes = append(notes, ripgrepNote(opt.Ripgrep))
	}
	if m := set.DeploymentMode; m != "" {
		cfg.Mode = sandbox.Mode(m) // the session's own sandbox/mode events state the runtime context's
	}
	if p.pol.Approval == recording.NoApprovalPlugin {
		cfg.Without.Approval = true
		notes = append(notes, "the runtime context has a sandbox:policy section and no approval:policy one: the composition had no approval plugin (nothing asks; an escalation is refused: no approval service is composed)")
	}
	return cfg, notes
}

// valueOr0 is *v, or 0 for an unset setting.
func valueOr0(v *int) int {
	if v == nil {
		return 0
	}
	return *v
}

// checkComposed fails when the script calls a tool the stack does not
// compose.
func (p *prepared) checkComposed(st *stack.Stack) error {
	composed := map[string]bool{}
	for _, t := range st.Tools() {
		composed[t] = true
	}
	if p.delegates {
		composed["report"] = true // a continuable child's own tool
	}
	if composed["workflow"] {
		composed[subagent.StructuredName] = true // a structured workflow child's own tool
	}
	check := func(file string, s *recording.Script) error {
		for _, r := range s.Replies {
			for _, c := range r.ToolCalls {
				if !composed[c.Name] {
					return fmt.Errorf("%s calls tool %q (turn %d step %d), which the stack does not compose (it has: %s)", file, c.Name, r.Turn, r.Step, strings.Join(st.Tools(), ", "))
				}
			}
		}
		return nil
	}
	if err := check("the recording", p.script); err != nil {
		return err
	}
	for _, c := range p.rec.Children {
		if err := check(c.File, c.Script); err != nil {
			return err
		}
	}
	return nil
}

// review adds the flags and notes of a driven replay: the model's waits, a
// timeout, unconsumed replies and answers, every agent's flags, the
// emulated fixtures, the wire frames, the sandbox backend, the tool
// schemas and the system prompt.
func (p *prepared) review(ctx context.Context, timeout time.Duration, run *sessionRun, ans *answers, res *Result) error {
	rec, st := p.rec, run.stack
	if n := run.settle.capped; n > 0 {
		res.Notes = append(res.Notes, fmt.Sprintf("the constructed model stopped waiting for the background jobs to settle before %d of its replies: they %s (still running at the last: %s)", n, run.settle.why, run.settle.busy))
	}
	if ctx.Err() != nil {
		res.Flags = append(res.Flags, fmt.Sprintf("the replay was stopped after %s (%v): calls in flight were aborted", timeout, ctx.Err()))
	}
	res.Flags = append(res.Flags, run.unconsumed(rec, p.script)...)
	res.Flags = append(res.Flags, run.flags()...)
	res.Notes = append(res.Notes, run.root.titleNotes()...)
	if note := run.fixture.note(rec.Marks()); run.family != nil && note != "" {
		res.Notes = append(res.Notes, note)
	}
	res.Flags = append(res.Flags, ans.flags()...)
	if rec.Frontend.OverACP() {
		lines, err := acpwire.Classify(rec.Stdout)
		if err != nil {
			return fmt.Errorf("%s: %w", filepath.Join(rec.Name, recording.StdoutFile), err)
		}
		// The frames the run's facts hold (a refresh writes them back), not
		// those sent since: a stopped run's stack may still be sending.
		wire := acpwire.Compare(recording.StdoutFile, lines, res.run.Frames)
		res.Flags = append(res.Flags, wire.Problems...)
		res.Notes = append(res.Notes, wire.Note(recording.StdoutFile))
	}
	if sandbox.Mode(p.pol.Mode).Confined() {
		if backend, enf := st.Backend(); backend != "" {
			res.Notes = append(res.Notes, backendNote(p.pol.Mode, backend, enf, st.Confiner().Fallback()))
		} else {
			res.Notes = append(res.Notes, "no sandbox backend is usable here: confined bash calls fail closed (SANDBOX_UNAVAILABLE)")
		}
	}
	flags, notes := compareSchemas(rec, st.WireTools())
	res.Flags = append(res.Flags, flags...)
	res.Notes = append(res.Notes, notes...)
	sections, sectionsErr := st.PromptSections()
	flags, notes = comparePrompt(rec, p.toolsMode, sections, sectionsErr)
	res.Flags = append(res.Flags, flags...)
	res.Notes = append(res.Notes, notes...)
	if n := ans.left(); n > 0 {
		res.Notes = append(res.Notes, fmt.Sprintf("%d permission answer(s) left unused (upstream ignores leftovers)", n))
	}
	return nil
}

// project reads our log back and projects it the way the recording's was.
func (p *prepared) project(sc *scratch) ([]projection.Item, projection.Coverage, error) {
	return p.projectLog(sc.logPath, sc.ws, sc.sessionID)
}

// projectLog reads a log of ours (the session's or a child's, whose id is
// id) and projects it, counting what the projection compares.
func (p *prepared) projectLog(path, cwd, id string) ([]projection.Item, projection.Coverage, error) {
	c, err := session.Read(path)
	if err != nil {
		return nil, projection.Coverage{}, fmt.Errorf("read our log %s: %w", path, err)
	}
	return projectOurs(p.rec, path, c, cwd, id)
}

// projectOurs projects our log c (read from path), whose cwd and session id
// are cwd and id, the way the recording's was.
func projectOurs(rec *recording.Recording, path string, c *session.Contents, cwd, id string) ([]projection.Item, projection.Coverage, error) {
	var cov projection.Coverage
	if len(c.Bad) > 0 {
		return nil, cov, fmt.Errorf("our log %s has undecodable lines: %v", path, c.Bad[0])
	}
	got, cov, err := projectLog(rec, eventsOf(c), normalizer(rec, cwd, id))
	if err != nil {
		return nil, cov, fmt.Errorf("our log %s: %w", path, err)
	}
	return got, cov, nil
}

// eventsOf are the events of our log c as a recording's.
func eventsOf(c *session.Contents) []recording.Event {
	evs := make([]recording.Event, len(c.Events))
	for i, e := range c.Events {
		evs[i] = recording.Event{Type: e.Type, Seq: e.Seq, Time: e.Time, Data: e.Data, SurfaceOp: e.SurfaceOp}
	}
	return evs
}

// frontendReview adds the front end's own comparisons of our log (a
// headless run's stream-json records) to res.
func (p *prepared) frontendReview(sc *scratch, res *Result) error {
	c, err := session.Read(sc.logPath)
	if err != nil {
		return fmt.Errorf("read our log %s: %w", sc.logPath, err)
	}
	flags, notes, err := frontendChecks(p.rec, eventsOf(c), sc.ws, sc.sessionID)
	res.Flags = append(res.Flags, flags...)
	res.Notes = append(res.Notes, notes...)
	return err
}

// answers is the constructed user: permissionAnswers answered FIFO.
type answers struct {
	mu       sync.Mutex
	queue    []recording.Answer
	problems []string
	wire     *bridge // the bridge that sends each permission request
	// ask, when set, answers a prompt the queue has no answer for (the
	// person at the terminal, dsh-record); asked keeps its answers in order,
	// askErr the first failure (the prompt was then cancelled).
	ask    func(ctx context.Context, req pipeline.ApprovalRequest) (recording.Answer, error)
	asked  []recording.Answer
	askErr error
	// ui, when set, answers every request (the web UI as the answerer).
	ui pipeline.ApprovalOutcome
}

// answer maps the next answer: allow_once → allowed-once, reject_once →
// rejected, an empty queue → cancelled. Kinds the bridge does not offer fail
// the run (flagged) and answer cancelled, so nothing is allowed by mistake.
func (a *answers) answer(ctx context.Context, req pipeline.ApprovalRequest) (pipeline.ApprovalOutcome, error) {
	a.wire.send(acpwire.PermissionRequest(req.CallID))
	if a.ui != "" {
		return a.ui, nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.queue) == 0 && a.ask != nil && a.askErr == nil {
		ans, err := a.ask(ctx, req)
		if err != nil {
			a.askErr = err
			return pipeline.Cancelled, nil
		}
		a.asked = append(a.asked, ans)
		a.queue = append(a.queue, ans)
	}
	if len(a.queue) == 0 {
		return pipeline.Cancelled, nil
	}
	next := a.queue[0]
	a.queue = a.queue[1:]
	switch next.Kind {
	case "allow_once":
		return pipeline.AllowedOnce, nil
	case "reject_once":
		return pipeline.Rejected, nil
	}
	a.problems = append(a.problems, fmt.Sprintf("permission answer %q was not offered (the prompt offers allow_once and reject_once); answered cancelled", next.Kind))
	return pipeline.Cancelled, nil
}

// standingAnswer is the answer every approval request of the recording
// gets, whatever its permission answers: the web UI's (uiAnswer), or, in a
// headless run, unavailable: the unattended path has no approval channel,
// and rc.8 decides each ask so (the tool or escalation is refused with "...
// requires approval, but no approval channel is available"), as
// upstream's headless profile shows through the oracle. "" for none.
func standingAnswer(rec *recording.Recording) pipeline.ApprovalOutcome {
	switch {
	case rec.Settings.UIAnswer != "":
		return pipeline.ApprovalOutcome(rec.Settings.UIAnswer)
	case rec.Frontend == recording.Headless:
		return pipeline.Unavailable
	}
	return ""
}

// sent are the frames the bridge sent so far.
func (a *answers) sent() []acpwire.Frame { return a.wire.sent() }

func (a *answers) left() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.queue)
}

func (a *answers) flags() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.problems...)
}

// compareSchemas compares the schemas of the tools the stack offers the
// model (its wire list in the recording's tools mode: run_code alone in
// code mode) with the recording's tool-schemas.expected.json: each
// difference is a flag naming the tool and field; the sidecar's other tools
// are named as not modelled.
func compareSchemas(rec *recording.Recording, defs []pipeline.Tool) (flags, notes []string) {
	return compareSchemasOf(recording.ToolSchemasFile, rec.ToolSchemas, defs)
}

// compareSchemasOf compares defs with the sidecar file's schemas (nil: none).
func compareSchemasOf(file string, schemas *recording.ToolSchemas, defs []pipeline.Tool) (flags, notes []string) {
	if schemas == nil {
		return nil, nil
	}
	expected := make([]toolschema.Expected, len(schemas.Initial))
	for i, t := range schemas.Initial {
		expected[i] = toolschema.Expected{Name: t.Name, Raw: t.Raw}
	}
	ours := make([]toolschema.Schema, len(defs))
	for i, t := range defs {
		ours[i] = toolschema.Schema{Name: t.Name, Description: t.Description, Parameters: t.Parameters}
	}
	rep := toolschema.Compare(expected, ours)
	for _, m := range rep.Mismatches {
		flags = append(flags, file+": "+m)
	}
	note := fmt.Sprintf("%s: compared %s", file, strings.Join(rep.Compared, ", "))
	if len(rep.NotModelled) > 0 {
		note += "; not modelled (the stack does not compose them): " + strings.Join(rep.NotModelled, ", ")
	}
	notes = append(notes, note)
	if n := len(schemas.Changes); n > 0 {
		notes = append(notes, fmt.Sprintf("%s: %d later header change(s) not compared (the stack's tool set never changes during a session)", file, n))
	}
	return flags, notes
}

// backendNote names the sandbox backend confined bash calls ran in, its
// enforcement, and what it admits it cannot govern (its Ungoverned list,
// by effect): the backend's own admission, which the report repeats; and,
// when the runner confined a Landlock call where the in-process path is the
// default, why.
func backendNote(mode, backend string, enf sandbox.Enforcement, fallback string) string {
	note := fmt.Sprintf("bash calls under %s run in the %s sandbox backend (%s enforcement)", mode, backend, enf)
	if fallback != "" {
		note += ", through the runner: " + fallback
	}
	dialect := backend
	if backend == inproc.Backend {
		dialect = sandbox.BackendLandlock // the in-process path speaks Landlock's
	}
	d, _ := sandbox.DialectOf(dialect)
	var effects []string
	for _, u := range d.Ungoverned {
		effect, _, _ := strings.Cut(u, ":")
		effects = append(effects, effect)
	}
	if len(effects) > 0 {
		note += "; it cannot govern " + strings.Join(effects, ", ") + " (its own admission: those changes go through outside the workspace, as far as the command's credentials allow)"
	}
	return note
}
