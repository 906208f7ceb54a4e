package replay

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/dshsim/dshsim/harness/replay/fileset"
	"github.com/dshsim/dshsim/harness/replay/isolate"
	"github.com/dshsim/dshsim/harness/replay/recording"
	"github.com/dshsim/dshsim/llm"
	"github.com/dshsim/dshsim/llm/deepseek"
	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/pipeline/session"
	"github.com/dshsim/dshsim/sandbox"
	"github.com/dshsim/dshsim/sandbox/outfile"
	"github.com/dshsim/dshsim/stack"
	"github.com/dshsim/dshsim/tools/jobs"
)

// recordName is the name the recording child is registered under.
const recordName = "dsh-record"

// DefaultProvider is the provider route a recording names (upstream's
// DeepSeek route, which its replay overlay also names).
const DefaultProvider = "deepseek-official"

// RecordOptions configure one recording.
type RecordOptions struct {
	// BaseURL is the chat completions server's root (required).
	BaseURL string
	// Model is the wire model name; Provider the route the log names it by
	// ("": DefaultProvider).
	Model, Provider string
	// Thinking (enabled, disabled or "") and ReasoningEffort (off, low,
	// high, max or "") are sent as upstream's adapter sends them.
	Thinking, ReasoningEffort string
	// KeyEnv names the key's variable ("": DEEPSEEK_API_KEY).
	KeyEnv string
	// Retry is the provider's retry policy (nil: upstream's live default).
	Retry *llm.RetryPolicy `json:",omitempty"`
	// IdleTimeout bounds a silent stream (0: 300 s).
	IdleTimeout time.Duration
	// Timeout bounds the whole session (0: 30 minutes).
	Timeout time.Duration
	// LauncherPath is the landlock-run binary ("" = beside the executable).
	LauncherPath string `json:",omitempty"`
	// Ripgrep is the rg glob and grep run, as [Options.Ripgrep] ("":
	// $DSHSIM_RIPGREP when set, else rg on PATH).
	Ripgrep string `json:",omitempty"`
	// ToolNetwork gives the session's tools the host's network (they have
	// none by default: the model is reached from the host, not from them).
	ToolNetwork bool `json:",omitempty"`
	// Bounds are the contained session's resource bounds (zero fields:
	// isolate.DefaultBounds).
	Bounds isolate.Bounds
	// Stderr receives what the isolated child writes, and the questions
	// asked at the terminal go to /dev/tty (nil: os.Stderr).
	Stderr io.Writer `json:"-"`
	// Frontend is the front end the recording is written as: "" or
	// recording.ACP upstream's ACP agent (stdout.expected.jsonl), or
	// recording.Headless its unattended path: one task, no approval channel
	// (each ask decided unavailable), stream-json.expected.jsonl
	// ([HeadlessInputError] says which scenarios fit).
	Frontend recording.Frontend `json:",omitempty"`
}

func (o RecordOptions) keyEnv() string {
	if o.KeyEnv == "" {
		return deepseek.KeyEnv
	}
	return o.KeyEnv
}

// recordRequest crosses into the recording child on its stdin. The key
// never crosses: the child reaches the model through the host (relay.go).
type recordRequest struct {
	Scenario string
	Name     string
	Options  RecordOptions
}

// recordResponse comes back from the recording child.
type recordResponse struct {
	Log   []byte
	Run   *runFacts
	Asked []recording.Answer
	// Failure says why the session cannot be a recording ("" when it can).
	Failure string
}

// Record drives a live model through our real stack with the scenario in
// dir (input.json and optionally workspace/) and writes the session as a
// recording in upstream's layout at out: input.json (with the answers given
// at the terminal), workspace/, session.jsonl, stdout.expected.jsonl and
// projection.expected.json. The session runs in a contained child as a
// replay does (package isolate), without network unless opt.ToolNetwork;
// the key is read from opt.KeyEnv now and stays in this process, which
// talks to the model and relays its chunks to the child (relay.go), and
// asks the person at its terminal what the child's prompts ask. The
// recording is written to a temporary directory beside out and renamed
// into place only when complete, so a failed model call, a dropped or
// malformed stream, a rejected key or an interruption leaves nothing
// behind. out must not exist.
func Record(ctx context.Context, dir, out string, opt RecordOptions) error {
	in, err := recording.LoadInput(dir)
	if err != nil {
		return err
	}
	switch opt.Frontend {
	case "", recording.ACP:
	case recording.Headless:
		if err := HeadlessInputError(in); err != nil {
			return fmt.Errorf("%s: not a headless run: %w", filepath.Join(dir, recording.InputFile), err)
		}
	default:
		return fmt.Errorf("front end %q: dsh-record writes acp or headless recordings", opt.Frontend)
	}
	if _, err := os.Lstat(out); err == nil {
		return fmt.Errorf("%s exists: dsh-record writes a new recording and replaces nothing", out)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if fi, err := os.Stat(filepath.Dir(out)); err != nil || !fi.IsDir() {
		return fmt.Errorf("%s: its parent directory does not exist", out)
	}
	client := deepseek.Client{BaseURL: opt.BaseURL, KeyEnv: opt.keyEnv(), IdleTimeout: opt.IdleTimeout, UserID: newUUID()}
	key, err := client.Key()
	if err != nil {
		var f *llm.Failure
		if errors.As(err, &f) {
			return errors.New(f.Message)
		}
		return err
	}
	client.LookupKey = func(string) (string, bool) { return key, true }
	if err := CheckIsolation(); err != nil {
		return err
	}
	if opt.Ripgrep, err = ripgrepPath(opt.Ripgrep, "RecordOptions.Ripgrep"); err != nil {
		return err
	}
	fmt.Fprintln(stderrOf(opt), "dsh-record: "+ripgrepNote(opt.Ripgrep))
	resp, err := recordContained(ctx, dir, out, opt, &relayHost{client: client, key: key, ask: askHere,
		model: deepseek.Request{Model: opt.Model, Thinking: opt.Thinking, ReasoningEffort: opt.ReasoningEffort}})
	if err != nil {
		return redact(err, key)
	}
	in.PermissionAnswers = append(in.PermissionAnswers, resp.Asked...)
	return redact(writeRecording(ctx, dir, out, in, resp, key, opt.Frontend), key)
}

// recordContained runs the session in a contained child, serving its relay
// with host, and returns what the child answered.
func recordContained(ctx context.Context, dir, out string, opt RecordOptions, host *relayHost) (recordResponse, error) {
	var resp recordResponse
	abs, err := filepath.Abs(dir)
	if err != nil {
		return resp, err
	}
	if abs, err = filepath.EvalSymlinks(abs); err != nil {
		return resp, err
	}
	req, err := json.Marshal(recordRequest{Scenario: abs, Name: filepath.Base(out), Options: opt})
	if err != nil {
		return resp, err
	}
	share := []string{abs}
	if opt.Ripgrep != "" {
		share = append(share, opt.Ripgrep)
	}
	if opt.LauncherPath != "" {
		share = append(share, opt.LauncherPath)
	} else if def := sandbox.DefaultLauncherPath(); fileExists(def) {
		share = append(share, def)
	}
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return resp, fmt.Errorf("the relay's socket pair: %w", err)
	}
	hostEnd, childEnd := os.NewFile(uintptr(fds[0]), "relay-host"), os.NewFile(uintptr(fds[1]), "relay-child")
	relayed := make(chan struct{})
	go func() { defer close(relayed); host.serve(ctx, hostEnd) }()
	// The child's own timeout ends the session; this one bounds the wait
	// for a child that does not end.
	timeout := opt.Timeout
	if timeout == 0 {
		timeout = 30 * time.Minute
	}
	rctx, cancel := context.WithTimeout(ctx, timeout+isolate.Grace)
	defer cancel()
	raw, err := isolate.Run(rctx, recordName, req, isolate.Options{Stderr: opt.Stderr, Share: share, HostNetwork: opt.ToolNetwork,
		Bounds: opt.Bounds, Conn: childEnd, Unset: []string{opt.keyEnv()}})
	childEnd.Close()
	hostEnd.Close()
	<-relayed
	if ctx.Err() != nil {
		return resp, fmt.Errorf("interrupted (%v): the session was stopped, nothing written", context.Cause(ctx))
	}
	if err != nil {
		return resp, fmt.Errorf("the recording session: %w", err)
	}
	if err := json.Unmarshal(raw, &resp); err != nil || resp.Run == nil {
		return resp, fmt.Errorf("the recording session: undecodable response (%v)", err)
	}
	if resp.Failure != "" {
		return resp, errors.New(resp.Failure + "; nothing written")
	}
	return resp, nil
}

// redact replaces the key in an error's text (a server may echo it).
func redact(err error, key string) error {
	if err == nil || key == "" || !strings.Contains(err.Error(), key) {
		return err
	}
	return errors.New(strings.ReplaceAll(err.Error(), key, "<redacted>"))
}

// writeRecording writes the recording into a temporary directory beside
// out, checks that no file holds the key, and renames it to out once all of
// it is durable, unless ctx was cancelled meanwhile (fileset.PlaceDir).
func writeRecording(ctx context.Context, dir, out string, in recording.Input, resp recordResponse, key string, fe recording.Frontend) (err error) {
	tmp, err := os.MkdirTemp(filepath.Dir(out), "."+filepath.Base(out)+".partial-")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			os.RemoveAll(tmp)
		}
	}()
	if err := os.Chmod(tmp, 0o755); err != nil {
		return err
	}
	files, err := fixtureFiles(resp.Log, nil, resp.Run, false)
	if fe == recording.Headless {
		files, err = headlessFiles(resp.Log, resp.Run)
	}
	if err != nil {
		return err
	}
	input, err := json.MarshalIndent(in, "", "  ")
	if err != nil {
		return err
	}
	files[recording.InputFile] = append(input, '\n')
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(tmp, name), data, 0o644); err != nil {
			return err
		}
	}
	if ws := filepath.Join(dir, recording.WorkspaceDir); isDir(ws) {
		if err := recording.CopyTree(ws, filepath.Join(tmp, recording.WorkspaceDir)); err != nil {
			return fmt.Errorf("copy the workspace: %w", err)
		}
	}
	rec, err := recording.Load(tmp)
	if err != nil {
		return fmt.Errorf("the recording does not read back: %w", err)
	}
	proj, err := ExpectedProjection(rec)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(tmp, recording.ProjectionFile), proj, 0o644); err != nil {
		return err
	}
	if err := holdsNo(tmp, key); err != nil {
		return err
	}
	return fileset.PlaceDir(ctx, tmp, out)
}

// stderrOf is where dsh-record's notes go.
func stderrOf(opt RecordOptions) io.Writer {
	if opt.Stderr == nil {
		return os.Stderr
	}
	return opt.Stderr
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// holdsNo fails when any file under dir holds secret.
func holdsNo(dir, secret string) error {
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if bytes.Contains(data, []byte(secret)) {
			rel, _ := filepath.Rel(dir, p)
			return fmt.Errorf("the API key appears in %s (the model or a tool echoed it): nothing written", rel)
		}
		return nil
	})
}

func serveRecord(ctx context.Context, data []byte) ([]byte, error) {
	var req recordRequest
	if err := json.Unmarshal(data, &req); err != nil {
		return nil, fmt.Errorf("record request: %w", err)
	}
	conn := isolate.Conn()
	if conn == nil {
		return nil, errors.New("record: no relay to dsh-record (isolate.Options.Conn)")
	}
	resp, err := recordHere(ctx, req, newRelayClient(conn))
	if err != nil {
		return nil, err
	}
	return json.Marshal(resp)
}

// recordHere runs the session in this process (the isolated child), whose
// model calls and terminal prompts go through relay.
func recordHere(ctx context.Context, req recordRequest, relay *relayClient) (recordResponse, error) {
	var resp recordResponse
	opt := req.Options
	in, err := recording.LoadInput(req.Scenario)
	if err != nil {
		return resp, err
	}
	timeout := opt.Timeout
	if timeout == 0 {
		timeout = 30 * time.Minute
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	ws, err := outfile.Mkdtemp("/tmp", "acp-snap-cwd-")
	if err != nil {
		return resp, err
	}
	defer os.RemoveAll(ws)
	if src := filepath.Join(req.Scenario, recording.WorkspaceDir); isDir(src) {
		if err := recording.CopyTree(src, ws); err != nil {
			return resp, fmt.Errorf("seed workspace: %w", err)
		}
	}
	logDir, err := outfile.Mkdtemp("/tmp", "acp-snap-sessions-")
	if err != nil {
		return resp, err
	}
	defer os.RemoveAll(logDir)
	logPath := filepath.Join(logDir, "session.jsonl")
	sessionID := newUUID()
	log, err := session.Create(logPath, session.Header{ID: sessionID, CreatedAt: time.Now().UnixMilli(), Cwd: ws})
	if err != nil {
		return resp, err
	}
	defer log.Close()
	wire := &bridge{}
	ans := &answers{queue: append([]recording.Answer(nil), in.PermissionAnswers...), wire: wire}
	switch {
	case opt.Frontend == recording.Headless:
		ans.ui = pipeline.Unavailable // no approval channel
	case len(in.PermissionAnswers) == 0:
		ans.ask = relay.ask
	}
	gate := jobs.NewGate()
	var root *driver // set before any tool runs, so before any job notices
	st, err := recordStack(in, ws, log, ans, gate, req, func(n jobs.Notice) { root.inbox.deliver(n.Text, n.Summary, n.SpawnFailed) })
	if err != nil {
		return resp, err
	}
	defer st.Close()
	model := &liveModel{model: opt.Model, provider: opt.Provider, thinking: opt.Thinking, effort: opt.ReasoningEffort, gate: gate,
		relay: relay, session: sessionID}
	if model.provider == "" {
		model.provider = DefaultProvider
	}
	model.retry = llm.DefaultRetryPolicy()
	if opt.Retry != nil {
		model.retry = *opt.Retry
	}
	system, err := systemPrompt(st)
	if err != nil {
		return resp, err
	}
	rec := &recording.Recording{Name: req.Name, Dir: req.Scenario, Input: in}
	if root, err = newDriver(ctx, driverConfig{rec: rec, model: model, system: system, surface: st, stack: st, ws: ws, wire: wire, gate: gate}); err != nil {
		return resp, err
	}
	c := &client{rec: rec, root: root, stack: st, wire: wire, ws: ws}
	runErr := c.run(ctx)
	root.Cancel(false)
	root.Close()
	resp.Failure = sessionFailure(ctx, runErr, ans, log)
	if data, err := os.ReadFile(logPath); err == nil {
		resp.Log = data
	}
	resp.Run = &runFacts{Frames: ans.sent(), SessionID: sessionID, Cwd: ws}
	resp.Asked = ans.asked
	return resp, nil
}

// recordStack composes the stack a recording runs under: the scenario's
// policy, upstream's snapshot defaults otherwise (no spill, a foreground
// timeout that kills, hooks from the workspace), and glob and grep, which
// upstream's base composition gives a live session, composed as the
// replay composes them for a recording that calls them
// ([snapshotFileSearch], the same rg).
func recordStack(in recording.Input, ws string, log *session.Log, ans *answers, gate *jobs.Gate, req recordRequest, deliver func(jobs.Notice)) (*stack.Stack, error) {
	mode, approval := in.Policy()
	promote := false
	st, err := stack.New(stack.Config{
		Workspace: ws,
		Log:       log,
		Mode:      sandbox.Mode(mode),
		Approval:  approval,
		Answer:    ans.answer,
		Spill:     stack.SpillConfig{Root: SpillRoot(req.Name)},
		SandboxConfig: stack.SandboxConfig{
			LauncherPath: req.Options.LauncherPath,
		},
		ToolOptions: stack.ToolOptions{
			Bash: stack.BashConfig{PromoteOnTimeout: &promote},
			Jobs: stack.JobsConfig{Gate: gate, Notify: deliver},
		},
		Hooks:      stack.HooksConfig{Dir: ws},
		ExtraTools: stack.ExtraTools{FileSearch: snapshotFileSearch(req.Options.Ripgrep)},
	})
	if err != nil {
		return nil, fmt.Errorf("stack (%s/%s): %w", mode, approval, err)
	}
	return st, nil
}

// systemPrompt is the system prompt a live model gets: the sections of the
// tools the stack composes.
func systemPrompt(st *stack.Stack) (string, error) {
	sections, err := st.PromptSections()
	if err != nil {
		return "", err
	}
	texts := make([]string, len(sections))
	for i, s := range sections {
		texts[i] = s.Text
	}
	return strings.Join(texts, "\n\n"), nil
}

// sessionFailure says why a session cannot be kept as a recording: it was
// interrupted, a prompt found no answer, the driver failed, or a turn ended
// in a failed model call (the model's failure named).
func sessionFailure(ctx context.Context, runErr error, ans *answers, log *session.Log) string {
	if ctx.Err() != nil {
		return fmt.Sprintf("the session was stopped (%v)", context.Cause(ctx))
	}
	if ans.askErr != nil {
		return ans.askErr.Error()
	}
	if runErr != nil {
		return runErr.Error()
	}
	events, err := log.Events()
	if err != nil {
		return err.Error()
	}
	for _, e := range events {
		if e.Type != session.KindTurnEnd {
			continue
		}
		var d struct {
			Reason struct {
				Kind  string      `json:"kind"`
				Error llm.Failure `json:"error"`
			} `json:"reason"`
		}
		if json.Unmarshal(e.Data, &d) == nil && d.Reason.Kind == "error" {
			return modelFailure(d.Reason.Error)
		}
	}
	return ""
}

// modelFailure is one line for a failed model call.
func modelFailure(f llm.Failure) string {
	switch f.Code {
	case "AUTH":
		return fmt.Sprintf("the server rejected the API key (HTTP %d, %s): check the key's variable", f.Status, f.Message)
	case "STREAM_CLOSED", "TRANSPORT":
		return "the model's stream broke off mid-turn: " + f.Message
	case "MALFORMED_RESPONSE":
		return "the model's stream sent an event that is not JSON: " + f.Message
	}
	if f.Status != 0 {
		return fmt.Sprintf("the model call failed: %s (%s, HTTP %d)", f.Message, f.Code, f.Status)
	}
	return fmt.Sprintf("the model call failed: %s (%s)", f.Message, f.Code)
}

// askOn asks on w, showing the call (pipeline.ApprovalRequest.Subject), and
// reads the answer from r: y or yes allows once, anything else rejects.
func askOn(_ context.Context, r io.Reader, w io.Writer, q relayAsk) (recording.Answer, error) {
	fmt.Fprintf(w, "dsh-record: the model's %s call %s asks for approval: %s\n", q.Tool, q.Call, q.Reason)
	if q.Subject != "" {
		fmt.Fprintf(w, "  the call: %s\n", q.Subject)
	}
	fmt.Fprint(w, "  allow once? [y/N] ")
	line, err := bufio.NewReader(r).ReadString('\n')
	if err != nil && line == "" {
		return recording.Answer{}, fmt.Errorf("no answer to the approval of %s call %s: %v", q.Tool, q.Call, err)
	}
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return recording.Answer{Kind: "allow_once"}, nil
	}
	return recording.Answer{Kind: "reject_once"}, nil
}
