package replay

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/dshsim/dshsim/harness/replay/acpwire"
	"github.com/dshsim/dshsim/harness/replay/projection"
	"github.com/dshsim/dshsim/harness/replay/recording"
	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/pipeline/session"
	"github.com/dshsim/dshsim/sandbox"
	"github.com/dshsim/dshsim/stack"
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
// recording, not a live model.
const ModelName = "constructed from the recording (dsh-replay script)"

// Options configure one replay.
type Options struct {
	// LogDir keeps our replayed logs as <LogDir>/<name>.session.jsonl; when
	// empty the log lives and dies with the replay's private /tmp.
	LogDir string
	// Timeout bounds one recording's replay (0: 2 minutes).
	Timeout time.Duration
	// SandboxChain overrides the sandbox backend chain (e.g. ["landlock"]);
	// nil keeps the platform chain (or the recording's sandboxBackend setting).
	SandboxChain []string `json:",omitempty"`
	// LauncherPath is the landlock-run binary ("" = beside the executable).
	LauncherPath string `json:",omitempty"`
	// StrictHooks fails closed where upstream's hooks fail open (a hook
	// config that cannot be loaded, a hook that cannot run).
	StrictHooks bool `json:",omitempty"`
	// Stderr receives what the isolated replay writes to its stdout and
	// stderr (nil: os.Stderr); never part of a report.
	Stderr io.Writer `json:"-"`
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
	// Mode and Approval are the settings the recording stated.
	Mode     string `json:"mode,omitempty"`
	Approval string `json:"approval,omitempty"`
	// Settings lists what came from dshsim.replay.json (empty when the recording needed none).
	Settings string `json:"settings,omitempty"`
	// Comparison is the per-turn comparison of the projections.
	Comparison projection.Comparison `json:"comparison"`
	// Flags are script and answer problems (an exhausted script, unconsumed
	// replies, an answer kind that was not offered, a stale projection file).
	Flags []string `json:"flags,omitempty"`
	// Notes are informational (leftover permission answers, constructed pieces).
	Notes []string `json:"notes,omitempty"`
	// LogPath is our replayed log when kept (Options.LogDir).
	LogPath string `json:"log,omitempty"`
	// Got is our projection (normalised), Expected the recording's.
	Expected []projection.Item `json:"-"`
	Got      []projection.Item `json:"-"`
	// Duration is the wall time of the replay (never part of a golden).
	Duration time.Duration `json:"-"`
}

// Summary is one line: "<name>: match 8/8" or the reason.
func (r *Result) Summary() string {
	switch r.Verdict {
	case Failed:
		return fmt.Sprintf("%s: error: %s", r.Name, r.Error)
	case Match:
		return fmt.Sprintf("%s: match %d/%d events", r.Name, r.Comparison.Matched, r.Comparison.Total)
	}
	s := fmt.Sprintf("%s: MISMATCH %d/%d events matched", r.Name, r.Comparison.Matched, r.Comparison.Total)
	if len(r.Flags) > 0 {
		s += "; " + strings.Join(r.Flags, "; ")
	}
	return s
}

// Detail renders the first mismatch as readable lines (empty on a match).
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
	if res.Comparison.Mismatched > 0 || res.Comparison.Matched != res.Comparison.Total || len(res.Flags) > 0 {
		res.Verdict = Mismatch
	} else {
		res.Verdict = Match
	}
	return res, log
}

func replay(ctx context.Context, dir string, opt Options, res *Result) (ourLog []byte, err error) {
	rec, err := recording.Load(dir)
	if err != nil {
		return nil, err
	}
	script, err := recording.Derive(rec)
	if err != nil {
		return nil, err
	}
	pol, err := rec.Policy()
	if err != nil {
		return nil, err
	}
	res.Mode, res.Approval = pol.Mode, pol.Approval
	if rec.HasSettings {
		b, _ := json.Marshal(rec.Settings)
		res.Settings = recording.SettingsFile + " " + string(b)
	}
	expected, err := projection.Project(rec.Events, projection.WithCwd(rec.Header.Cwd, rec.Header.ID))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(rec.Name, recording.SessionFile), err)
	}
	res.Expected = expected
	if stale, err := checkProjectionFile(rec, expected); err != nil {
		return nil, err
	} else if stale != "" {
		res.Flags = append(res.Flags, stale)
	}

	timeout := opt.Timeout
	if timeout == 0 {
		timeout = 2 * time.Minute
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	// /tmp is this replay's own (package isolate): the workspace is spelled
	// like upstream's (/tmp/acp-snap-cwd-XXXXXX, the same length), the spill
	// root is upstream's fixed path, and everything goes with the namespace.
	ws, err := mkdtemp("/tmp", "acp-snap-cwd-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(ws)
	if rec.Workspace != "" {
		if err := recording.CopyTree(rec.Workspace, ws); err != nil {
			return nil, fmt.Errorf("seed workspace from %s: %w", rec.Workspace, err)
		}
	}
	logDir, err := mkdtemp("/tmp", "acp-snap-sessions-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(logDir)
	logPath := filepath.Join(logDir, rec.Name+".session.jsonl")
	sessionID := newUUID()
	log, err := session.Create(logPath, session.Header{ID: sessionID, CreatedAt: time.Now().UnixMilli(), Cwd: ws})
	if err != nil {
		return nil, err
	}
	defer log.Close()
	defer func() {
		if data, rerr := os.ReadFile(logPath); rerr == nil {
			ourLog = data
		}
	}()

	chain := opt.SandboxChain
	if b := rec.Settings.SandboxBackend; b != "" {
		if len(chain) > 0 && (len(chain) != 1 || chain[0] != b) {
			res.Notes = append(res.Notes, fmt.Sprintf("%s pins sandboxBackend %q over the run's backend chain %v", recording.SettingsFile, b, chain))
		}
		chain = []string{b}
	}
	if err := unwiredSettings(rec.Settings); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(rec.Name, recording.SettingsFile), err)
	}
	ans := &answers{queue: append([]recording.Answer(nil), rec.Input.PermissionAnswers...)}
	st, err := stack.New(stack.Config{
		Workspace:           ws,
		Log:                 log,
		Mode:                sandbox.Mode(pol.Mode),
		Approval:            pol.Approval,
		Answer:              ans.answer,
		SpillRoot:           SpillRoot(rec.Name),
		SpillMaxInlineBytes: rec.Settings.SpillMaxInlineBytes,
		DiffBasisMaxBytes:   rec.Settings.DiffBasisMaxBytes,
		BashTimeout:         time.Duration(rec.Settings.BashTimeoutMs) * time.Millisecond,
		SandboxChain:        chain,
		LauncherPath:        opt.LauncherPath,
		HooksDir:            ws, // the launch cwd: workspace/hooks.json and codex-hooks.json load from it
		HooksStrict:         opt.StrictHooks,
	})
	if err != nil {
		return nil, fmt.Errorf("stack for %s (%s/%s): %w", rec.Name, pol.Mode, pol.Approval, err)
	}
	defer st.Close()
	composed := map[string]bool{}
	for _, t := range st.Tools() {
		composed[t] = true
	}
	for _, r := range script.Replies {
		for _, c := range r.ToolCalls {
			if !composed[c.Name] {
				return nil, fmt.Errorf("the recording calls tool %q (turn %d step %d), which the stack does not compose (it has: %s)", c.Name, r.Turn, r.Step, strings.Join(st.Tools(), ", "))
			}
		}
	}

	for _, r := range st.HookReports() {
		// Name the recording's file, not our temporary copy of it.
		res.Notes = append(res.Notes, strings.ReplaceAll(r, ws, filepath.Join(rec.Dir, "workspace")))
	}
	d := &driver{rec: rec, script: script, log: log, stack: st, wire: ans}
	for _, step := range rec.Input.Steps {
		if step.Op != "prompt" {
			continue // initialize and newSession: the session above is the new session
		}
		if err := d.turn(ctx, step.Text); err != nil {
			return nil, err
		}
	}
	if ctx.Err() != nil {
		res.Flags = append(res.Flags, fmt.Sprintf("the replay was stopped after %s (%v): calls in flight were aborted", timeout, ctx.Err()))
	}
	if n := len(script.Replies) - d.next; n > 0 {
		res.Flags = append(res.Flags, fmt.Sprintf("unconsumed replies: %d of %d model replies were never requested", n, len(script.Replies)))
	}
	res.Flags = append(res.Flags, d.flags...)
	res.Flags = append(res.Flags, ans.flags()...)
	lines, err := acpwire.Classify(rec.Stdout)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(rec.Name, recording.StdoutFile), err)
	}
	wire := acpwire.Compare(recording.StdoutFile, lines, ans.sent())
	res.Flags = append(res.Flags, wire.Problems...)
	res.Notes = append(res.Notes, wire.Note(recording.StdoutFile))
	if sandbox.Mode(pol.Mode).Confined() {
		if backend, enf := st.Backend(); backend != "" {
			res.Notes = append(res.Notes, fmt.Sprintf("bash calls under %s run in the %s sandbox backend (%s enforcement)", pol.Mode, backend, enf))
		} else {
			res.Notes = append(res.Notes, "no sandbox backend is usable here: confined bash calls fail closed (SANDBOX_UNAVAILABLE)")
		}
	}
	for _, pin := range []string{"system-prompt.expected.md", "tool-schemas.expected.json"} {
		if _, err := os.Stat(filepath.Join(rec.Dir, pin)); err == nil {
			res.Notes = append(res.Notes, pin+" (a request/header pin) is not compared: dsh-replay checks the tool boundary only")
		}
	}
	if n := ans.left(); n > 0 {
		res.Notes = append(res.Notes, fmt.Sprintf("%d permission answer(s) left unused (upstream ignores leftovers)", n))
	}

	c, err := session.Read(logPath)
	if err != nil {
		return nil, fmt.Errorf("read our log: %w", err)
	}
	if len(c.Bad) > 0 {
		return nil, fmt.Errorf("our log %s has undecodable lines: %v", logPath, c.Bad[0])
	}
	evs := make([]recording.Event, len(c.Events))
	for i, e := range c.Events {
		evs[i] = recording.Event{Type: e.Type, Seq: e.Seq, Time: e.Time, Data: e.Data}
	}
	got, err := projection.Project(evs, projection.WithCwd(ws, sessionID))
	if err != nil {
		return nil, fmt.Errorf("our log %s: %w", logPath, err)
	}
	res.Got = got
	res.Comparison = projection.Compare(expected, got)
	return nil, nil
}

// driver is the replay's agent loop.
type driver struct {
	rec       *recording.Recording
	script    *recording.Script
	log       *session.Log
	stack     *stack.Stack
	next      int
	turnNo    int
	lastCtx   string
	flags     []string
	exhausted bool
	// inbox holds the context messages staged for the next step (a hook's
	// additionalContext), as upstream's next-step inbox does.
	inbox []map[string]any
	wire  *answers // the frames the bridge would send
}

func (d *driver) append(typ string, data any) (session.Event, error) {
	e, err := d.log.Append(typ, data)
	if err != nil {
		return e, fmt.Errorf("append %s to our log: %w", typ, err)
	}
	return e, nil
}

// emitContext lets the stack append the runtime-context message when it changed.
func (d *driver) emitContext(ctx context.Context) error {
	if _, err := d.stack.SyncContext(ctx); err != nil {
		return fmt.Errorf("runtime context: %w", err)
	}
	return nil
}

func (d *driver) turn(ctx context.Context, prompt string) error {
	d.turnNo++
	turn := d.turnNo
	if _, err := d.append("turn/start", map[string]any{"turn": turn}); err != nil {
		return err
	}
	endTurn := func(reason map[string]any) error {
		_, err := d.append("turn/end", map[string]any{"turn": turn, "reason": reason})
		d.wire.send(acpwire.Stop(stopReason(reason)))
		return err
	}
	for step := 1; ; step++ {
		claimed := d.inbox
		if len(claimed) > 0 {
			d.inbox = nil
			if _, err := d.append("agent/inbox/spliced", map[string]any{"target": "next-step", "start": 0, "removedCount": len(claimed), "inserted": []any{}}); err != nil {
				return err
			}
		}
		if _, err := d.append("step/start", map[string]any{"turn": turn, "step": step}); err != nil {
			return err
		}
		if step == 1 {
			if _, err := d.append("user/message", map[string]any{
				"content": []pipeline.Block{pipeline.TextBlock(prompt)},
				"source":  map[string]any{"kind": "user"},
				"role":    "user",
				"id":      newUUID(),
			}); err != nil {
				return err
			}
		}
		// The claimed messages come after the step's own and before the
		// runtime context, as upstream's agent loop orders them.
		for _, m := range claimed {
			if _, err := d.log.AppendWith("user/message", m, session.AppendOptions{SurfaceOp: "append"}); err != nil {
				return fmt.Errorf("append user/message to our log: %w", err)
			}
		}
		if err := d.emitContext(ctx); err != nil {
			return err
		}
		if d.next >= len(d.script.Replies) {
			msg := fmt.Sprintf("llm-replay: script exhausted — session requested model call #%d but its script has only %d", d.next+1, len(d.script.Replies))
			if !d.exhausted {
				d.flags = append(d.flags, "script exhausted: "+msg)
				d.exhausted = true
			}
			if _, err := d.append("step/end", map[string]any{"turn": turn, "step": step}); err != nil {
				return err
			}
			return endTurn(map[string]any{"kind": "error", "error": map[string]any{"name": "LlmError", "message": msg}})
		}
		reply := d.script.Replies[d.next]
		d.next++
		content := make([]map[string]any, 0, len(reply.Blocks))
		for _, b := range reply.Blocks {
			m := map[string]any{"type": b.Type}
			if b.Type == "tool-call" {
				m["id"], m["name"], m["arguments"] = b.ID, b.Name, b.Arguments
			} else {
				m["text"] = b.Text
			}
			content = append(content, m)
		}
		msg := map[string]any{"turn": turn, "step": step, "message": map[string]any{
			"role": "assistant", "content": content,
			"source": map[string]any{"kind": "model", "provider": "dsh-replay", "model": ModelName},
			"id":     newUUID(),
		}}
		if reply.Usage != nil {
			msg["usage"] = reply.Usage
		}
		if _, err := d.append("assistant/message", msg); err != nil {
			return err
		}
		if reply.Throw != nil {
			if _, err := d.append("step/end", map[string]any{"turn": turn, "step": step}); err != nil {
				return err
			}
			e := map[string]any{"name": "LlmError", "message": reply.Throw.Message}
			if reply.Throw.Code != "" {
				e["code"] = reply.Throw.Code
			}
			return endTurn(map[string]any{"kind": "error", "error": e})
		}
		callSeqs := make([]int64, len(reply.ToolCalls))
		for i, tc := range reply.ToolCalls {
			e, err := d.append("tool/call", map[string]any{"turn": turn, "step": step, "callId": tc.ID, "name": tc.Name, "arguments": tc.Arguments})
			if err != nil {
				return err
			}
			callSeqs[i] = e.Seq
		}
		concludes := false
		for i, tc := range reply.ToolCalls {
			r := d.stack.Execute(ctx, tc.ID, tc.Name, json.RawMessage(tc.Arguments))
			concludes = concludes || r.ConcludesTurn
			data := map[string]any{"turn": turn, "step": step, "message": map[string]any{
				"source": map[string]any{"kind": "tool", "callId": tc.ID},
				"content": []map[string]any{{
					"type": "tool-result", "toolCallId": tc.ID, "content": blocksOrEmpty(r.Content), "isError": r.IsError,
				}},
				"role": "user",
				"id":   newUUID(),
			}}
			if r.Error != nil && r.Error.Info != nil {
				data["error"] = r.Error.Info
			}
			if len(r.Meta) > 0 {
				data["meta"] = r.Meta
			}
			if _, err := d.log.AppendWith("tool/result", data, session.AppendOptions{SourceEventSeqs: []int64{callSeqs[i]}, SurfaceOp: "append"}); err != nil {
				return fmt.Errorf("append tool/result to our log: %w", err)
			}
			if err := d.stage(r.ContextMessages); err != nil {
				return err
			}
		}
		if _, err := d.append("step/end", map[string]any{"turn": turn, "step": step}); err != nil {
			return err
		}
		if len(reply.ToolCalls) > 0 && !concludes {
			continue
		}
		kind := "completed"
		if reply.Finish == "max-tokens" {
			kind = "max-tokens"
		}
		return endTurn(map[string]any{"kind": kind})
	}
}

// stage puts a result's context messages into the next-step inbox, each as
// upstream's plugin user message, right after its tool/result.
func (d *driver) stage(msgs []pipeline.ContextMessage) error {
	for _, m := range msgs {
		content := make([]pipeline.Block, len(m.Texts))
		for i, t := range m.Texts {
			content[i] = pipeline.TextBlock(t)
		}
		msg := map[string]any{"content": content, "source": map[string]any{"kind": "plugin", "plugin": m.Plugin}, "role": "user", "id": newUUID()}
		if _, err := d.append("agent/inbox/spliced", map[string]any{"target": "next-step", "start": len(d.inbox), "inserted": []any{msg}}); err != nil {
			return err
		}
		d.inbox = append(d.inbox, msg)
	}
	return nil
}

func blocksOrEmpty(b []pipeline.Block) []pipeline.Block {
	if b == nil {
		return []pipeline.Block{}
	}
	return b
}

// answers is the constructed user: permissionAnswers answered FIFO.
type answers struct {
	mu       sync.Mutex
	queue    []recording.Answer
	problems []string
	frames   []acpwire.Frame // what the bridge would have sent, in order
}

// answer maps the next answer: allow_once → allowed-once, reject_once →
// rejected, an empty queue → cancelled. Kinds the bridge does not offer fail
// the run (flagged) and answer cancelled, so nothing is allowed by mistake.
func (a *answers) answer(ctx context.Context, req pipeline.ApprovalRequest) (pipeline.ApprovalOutcome, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.frames = append(a.frames, acpwire.PermissionRequest(req.CallID))
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

// send records a frame the bridge sends (a prompt's stop reason).
func (a *answers) send(f acpwire.Frame) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.frames = append(a.frames, f)
}

func (a *answers) sent() []acpwire.Frame {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]acpwire.Frame(nil), a.frames...)
}

// stopReason maps a turn/end reason to the prompt's ACP stop reason ("" for
// a failed turn, which the bridge answers with a JSON-RPC error).
func stopReason(reason map[string]any) string {
	switch reason["kind"] {
	case "completed":
		return "end_turn"
	case "max-tokens":
		return "max_tokens"
	case "aborted":
		if r, _ := reason["reason"].(map[string]any); r["kind"] == "user" {
			return "cancelled"
		}
		return "end_turn"
	}
	return ""
}

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

func newUUID() string {
	var b [16]byte
	if _, err := io.ReadFull(rand.Reader, b[:]); err != nil {
		panic(err) // crypto/rand never fails on Linux
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// unwiredSettings refuses the settings the stack cannot apply yet.
func unwiredSettings(s recording.Settings) error {
	var keys []string
	if s.MaxConcurrentJobsPerOwner != nil {
		keys = append(keys, "maxConcurrentJobsPerOwner")
	}
	if s.SessionQuery {
		keys = append(keys, "sessionQuery")
	}
	if s.LandlockABI != nil {
		keys = append(keys, "landlockAbi")
	}
	if s.LandlockRunner != "" {
		keys = append(keys, "landlockRunner")
	}
	if len(keys) > 0 {
		return fmt.Errorf("the stack does not apply %s yet; refusing to replay without them", strings.Join(keys, ", "))
	}
	return nil
}
