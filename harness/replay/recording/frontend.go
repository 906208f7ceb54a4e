package recording

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/dshsim/dshsim/pipeline/session"
)

// Frontend is the front end upstream recorded a session through: the same
// session-log vocabulary, driven and compared by a suite of its own.
type Frontend string

// The front ends a recording directory can come from.
const (
	// ACP is the ACP agent's snapshot suite: input.json, session.jsonl,
	// stdout.expected.jsonl.
	ACP Frontend = "acp"
	// Headless is the unattended path (examples/headless-agent): the
	// stream-json records and the saved logs are compared.
	Headless Frontend = "headless"
	// JSONRPC is the SDK's JSON-RPC example: notifications and a result.
	JSONRPC Frontend = "jsonrpc"
	// PythonSDK is the Python SDK's single-executable run: a result.json.
	PythonSDK Frontend = "python-sdk"
	// Goal is the ACP agent's goal suite: the whole log and stdout.
	Goal Frontend = "goal"
	// Web is the web app's Playwright suite: the session log at the tool
	// boundary (its UI renders are not ours to replay).
	Web Frontend = "web"
)

// OverACP reports whether the front end's suite drives the ACP agent and
// compares its frames (stdout.expected.jsonl): ACP's and goal's.
func (f Frontend) OverACP() bool { return f == ACP || f == Goal }

// Files of the front ends beyond ACP.
const (
	StreamFile          = "stream-json.expected.jsonl"
	SessionExpectedFile = "session.expected.jsonl"
	ParentExpectedFile  = "parent.expected.jsonl"
	ParentReplayFile    = "parent.replay.jsonl"
	ChildExpectedFile   = "child.expected.jsonl"
	ChildReplayFile     = "child.replay.jsonl"
	HeaderReplayFile    = "replay.jsonl"
	StderrExpectedFile  = "stderr.expected.txt"
	NotificationsFile   = "notifications.expected.jsonl"
	ResultExpectedFile  = "result.expected.json"
	ResultFile          = "result.json"
	SeedFile            = "seed.jsonl"
	// RequestResponseFile is upstream's translation-prompt snapshot
	// (scripts/snapshots/translation-prompt-v4): one assembled model
	// request and the response it consumed, no session.
	RequestResponseFile = "request-response.expected.json"
)

// frontendFiles are the files that make a directory a recording of a front
// end beyond ACP (besides input.json and session.jsonl).
var frontendFiles = []string{StreamFile, SessionExpectedFile, ParentExpectedFile, ParentReplayFile,
	NotificationsFile, ResultExpectedFile, ResultFile, SeedFile, RequestResponseFile, StderrExpectedFile}

// logFiles are the files a headless run's log or model script can be in:
// a directory of upstream's headless suite with none holds no session.
var logFiles = []string{SessionFile, SessionExpectedFile, ParentExpectedFile, ParentReplayFile, ChildExpectedFile,
	ChildReplayFile, HeaderReplayFile, OverrideFile, StreamFile}

// NotASessionError says a directory holds no session to replay: a web
// directory with only seed.jsonl (a history the UI displays, no model
// script), or upstream's translation-prompt snapshot (a model request and
// its response, no session log).
type NotASessionError struct {
	Recording string
	Why       string
}

func (e *NotASessionError) Error() string {
	return e.Recording + ": not a session: " + e.Why
}

// ClassifyFiles says which front end a recording directory holding the
// files names comes from, by the files upstream's suites write for each:
// a pure function of the names ([DetectFrontend] reads them).
func ClassifyFiles(rec string, names []string) (Frontend, error) {
	has := func(f string) bool { return slices.Contains(names, f) }
	switch {
	case has(NotificationsFile) || has(ResultExpectedFile):
		return JSONRPC, nil
	case has(ResultFile):
		return PythonSDK, nil
	case has(StderrExpectedFile) && !slices.ContainsFunc(logFiles, has):
		return "", &NotASessionError{Recording: rec, Why: StderrExpectedFile + " only: the headless run failed before any session began (upstream's startup-activation-error: the Loader refused its composition), so there is no log or model script to replay; dsh-replay composes no Cordis Loader to fail the same way"}
	case has(StreamFile) || has(ParentExpectedFile) || has(ParentReplayFile) || has(ChildExpectedFile) ||
		has(StderrExpectedFile) || (has(SessionExpectedFile) && !has(StdoutFile)):
		return Headless, nil
	case has(SessionExpectedFile) && has(StdoutFile):
		return Goal, nil
	case has(StdoutFile):
		return ACP, nil
	case has(SeedFile) && !has(SessionFile):
		return "", &NotASessionError{Recording: rec, Why: SeedFile + " only: a history the web UI displays, with no model script to replay"}
	case has(RequestResponseFile) && !has(SessionFile) && !has(InputFile):
		return "", &NotASessionError{Recording: rec, Why: RequestResponseFile + " only: the translation-prompt snapshot (one assembled model request and the response it consumed), with no session log or model script to replay"}
	case has(SessionFile) && slices.ContainsFunc(names, func(n string) bool { return strings.HasSuffix(n, ".expected.md") }):
		return Web, nil
	}
	return ACP, nil // an ACP recording's missing files are named as such
}

// DetectFrontend reads the names in dir and classifies them
// ([ClassifyFiles]); a directory holding session.jsonl alone under
// upstream's web snapshots (apps/web/tests/snapshots) is a web session.
func DetectFrontend(dir, rec string) (Frontend, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return ACP, nil // the loader names what is missing
	}
	names := make([]string, 0, len(ents))
	for _, e := range ents {
		names = append(names, e.Name())
	}
	fe, err := ClassifyFiles(rec, names)
	if err == nil && fe == ACP && !slices.Contains(names, InputFile) && !slices.Contains(names, StdoutFile) &&
		strings.HasSuffix(filepath.ToSlash(filepath.Dir(filepath.Clean(dir))), "apps/web/tests/snapshots") {
		return Web, nil
	}
	return fe, err
}

// Stream is what a front end's client received besides the log: a
// headless run's stream-json.expected.jsonl (one {type: "session_event",
// sessionId, event} record per event of the session from the prompt's
// splice on, then one {type: "result"} record), or a JSON-RPC run's
// notifications.expected.jsonl (session.event and session.status of the
// session and its children, subagent.started and .finished) and
// result.expected.json.
type Stream struct {
	// File is the file of the records.
	File string
	// Events are the session's events, in order.
	Events []Event
	// Children are the events of the child sessions, each in order,
	// children in the order their first event came (JSON-RPC).
	Children [][]Event
	// Statuses are the session's session.status values in order
	// (JSON-RPC).
	Statuses []string
	// Subagents counts the subagent.* notifications (JSON-RPC).
	Subagents int
	// Notified are the session's session.event notifications where the
	// run's result holds its events beside them (the Python SDK's
	// result.json: Events are its events, Notified the notifications').
	Notified []Event
	// Result is the result: the final assistant text (and, headless, the
	// model usage summed over the steps).
	Result StreamResult
	// ResultFile and ResultLine locate the result (the stream's last
	// record, or result.expected.json).
	ResultFile string
	ResultLine int
}

// StreamResult is the result record (its sessionId aside).
type StreamResult struct {
	Output string         `json:"output"`
	Usage  map[string]int `json:"usage,omitempty"`
}

// parseStream decodes stream-json.expected.jsonl streamed by lr: session
// events (each checked as a log's event is), then exactly one result, last.
func parseStream(rec string, lr *lineReader) (*Stream, error) {
	fail := func(line int, field, format string, args ...any) error {
		return &Error{Recording: rec, File: StreamFile, Line: line, Field: field, Problem: fmt.Sprintf(format, args...)}
	}
	s := &Stream{File: StreamFile, ResultFile: StreamFile}
	next := int64(-1)
	for {
		ln, err := lr.next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		if s.ResultLine > 0 {
			return nil, fail(lr.n, "type", "a record after the result record (the result is the stream's last)")
		}
		var rcd struct {
			Type      *string          `json:"type"`
			SessionID *string          `json:"sessionId"`
			Event     *json.RawMessage `json:"event"`
			Output    *string          `json:"output"`
			Usage     map[string]int   `json:"usage"`
		}
		if err := json.Unmarshal(ln, &rcd); err != nil {
			return nil, jsonError(rec, StreamFile, ln, lr.n, err)
		}
		switch {
		case rcd.Type == nil:
			return nil, fail(lr.n, "type", "missing")
		case rcd.SessionID == nil:
			return nil, fail(lr.n, "sessionId", "missing")
		case *rcd.Type == "result":
			if rcd.Output == nil {
				return nil, fail(lr.n, "output", "missing (required in the result record)")
			}
			s.Result, s.ResultLine = StreamResult{Output: *rcd.Output, Usage: rcd.Usage}, lr.n
			continue
		case *rcd.Type != "session_event":
			return nil, fail(lr.n, "type", "want \"session_event\" or \"result\", got %q", *rcd.Type)
		case rcd.Event == nil:
			return nil, fail(lr.n, "event", "missing")
		}
		evs, err := parseLine(rec, *rcd.Event, lr.n, false, next, nil)
		if err != nil {
			return nil, streamError(err, StreamFile)
		}
		next = evs[len(evs)-1].Seq + 1
		s.Events = append(s.Events, evs...)
	}
	if s.ResultLine == 0 {
		return nil, fail(lr.n, "", "no result record (a headless run ends with {\"type\": \"result\"})")
	}
	return s, nil
}

// streamError names the records' file and the event's field in an error
// the session parser raised against an event of it.
func streamError(err error, file string) error {
	var e *Error
	if !errors.As(err, &e) {
		return err
	}
	c := *e
	c.File = file
	if c.Field != "" {
		c.Field = prefix(file) + c.Field
	} else {
		c.Field = strings.TrimSuffix(prefix(file), ".")
	}
	return &c
}

// prefix is the path of an event inside a record of file.
func prefix(file string) string {
	if file == NotificationsFile {
		return "params.event."
	}
	return "event."
}

// streamHeader is the header of a headless run whose session log the
// directory does not hold: the stream's session, tokenised as upstream's
// normaliser tokenises it.
var streamHeader = Header{Type: "session", ID: "{{sessionId}}", Cwd: "{{cwd}}"}

// goalLog takes a goal recording's compared log: session.jsonl is the
// header llm-replay is given (its model script is replay.override.json),
// session.expected.jsonl the whole log upstream's suite compares.
func (l *loader) goalLog(r *Recording) error {
	switch {
	case len(r.Events) > 0:
		return l.fail(SessionFile, r.Events[0].Line, "", "a goal recording's %s is its header alone (the suite compares %s; the model script is %s)", SessionFile, SessionExpectedFile, OverrideFile)
	case r.Override == nil || r.Override.Replace == nil:
		return l.fail(OverrideFile, 0, "", "missing file or not a whole script: a goal recording's model script is %s (a bare entry array)", OverrideFile)
	}
	h, evs, err := l.session(SessionExpectedFile)
	if err != nil {
		return err
	}
	r.Header, r.Events, r.LogFile = h, evs, SessionExpectedFile
	return nil
}

// loadFrontend reads a recording of a front end beyond ACP into r.
func (l *loader) loadFrontend(r *Recording) error {
	if r.Frontend == Web {
		return l.loadWeb(r)
	}
	if err := l.workspace(r); err != nil {
		return err
	}
	if err := l.optional(r); err != nil {
		return err
	}
	if err := l.notWeb(r); err != nil {
		return err
	}
	if err := l.headlessInput(r); err != nil {
		return err
	}
	if err := l.headlessLog(r); err != nil {
		return err
	}
	if err := PromptFromLog(r); err != nil {
		return err
	}
	if err := l.loadChildren(r); err != nil {
		return err
	}
	if err := l.expectedChild(r); err != nil {
		return err
	}
	if err := checkResumeSeed(r); err != nil {
		return err
	}
	switch r.Frontend {
	case JSONRPC:
		return l.notifications(r)
	case PythonSDK:
		return l.pythonResult(r)
	}
	return nil
}

// headlessInput is input.json, or the prompt upstream's test file gives
// the scenario (the prompt setting).
func (l *loader) headlessInput(r *Recording) error {
	data, found, err := l.readOptional(InputFile)
	switch {
	case err != nil:
		return err
	case found && r.Settings.Prompt != "":
		return l.fail(SettingsFile, 0, "prompt", "set, but the recording has %s: its steps give the prompts", InputFile)
	case found:
		if err := decodeStrict(data, &r.Input); err != nil {
			return jsonError(r.Name, InputFile, data, 0, err)
		}
		return checkInput(r.Name, data, r.Input)
	case r.Settings.Prompt == "" && sdkRun(r.Frontend):
		r.PromptFromLog = true // read once the log is ([PromptFromLog])
		return nil
	case r.Settings.Prompt == "":
		return l.fail(InputFile, 0, "", "missing file, and no prompt setting: upstream's test file gives this %s scenario its prompt; state it as \"prompt\" in %s", r.Frontend, SettingsFile)
	}
	r.Input = Input{Steps: []Step{{Op: "prompt", Text: r.Settings.Prompt}}}
	return nil
}

// sdkRun reports whether the front end's suite runs one SDK turn: one
// prompt, sent as the SDK's run() sends it, which the log holds verbatim.
func sdkRun(fe Frontend) bool { return fe == JSONRPC || fe == PythonSDK }

// PromptFromLog makes an SDK run's one prompt step of the log's one user
// message when r.PromptFromLog (no input.json, no prompt setting: a
// scenario whose test file the settings table does not know). The suite
// sends exactly one prompt, which the log holds as its text; a log with
// no user message or several cannot say which was sent, and is refused
// naming input.json.
func PromptFromLog(r *Recording) error {
	if !r.PromptFromLog {
		return nil
	}
	prompts, err := WebPrompts(r.Name, r.Events)
	if err != nil {
		return err
	}
	if len(prompts) != 1 || prompts[0] == "" {
		return &Error{Recording: r.Name, File: InputFile, Problem: fmt.Sprintf("missing file, and no prompt setting; %s holds %d user messages, so its prompt cannot be read from it: state it as \"prompt\" in %s", r.LogFile, len(prompts), SettingsFile)}
	}
	r.Input = Input{Steps: []Step{{Op: "prompt", Text: prompts[0]}}}
	return nil
}

// headlessLog reads the log the suite compares (session.jsonl with events,
// else session.expected.jsonl or parent.expected.jsonl), and the
// stream-json records; a run whose only log is a header takes the
// stream's events as its log.
func (l *loader) headlessLog(r *Recording) error {
	r.LogFile = ""
	for _, f := range []string{SessionFile, SessionExpectedFile, ParentExpectedFile} {
		if found, err := l.exists(f); err != nil {
			return err
		} else if !found {
			continue
		}
		h, evs, err := l.session(f)
		if err != nil {
			return err
		}
		if r.LogFile == "" || len(r.Events) == 0 {
			r.Header, r.Events, r.LogFile = h, evs, f
		}
		if len(evs) > 0 {
			break
		}
	}
	if found, err := l.exists(StreamFile); err != nil {
		return err
	} else if found {
		lr, done, err := l.lines(StreamFile)
		if err != nil {
			return err
		}
		r.Stream, err = parseStream(r.Name, lr)
		done()
		if err != nil {
			return err
		}
	}
	switch {
	case len(r.Events) == 0 && r.Stream != nil:
		if r.LogFile == "" {
			r.Header = streamHeader
		}
		r.Events, r.LogFile = r.Stream.Events, StreamFile
	case r.LogFile == "":
		return l.fail(SessionFile, 0, "", "missing file: a headless recording holds %s, %s, %s or %s", SessionFile, SessionExpectedFile, ParentExpectedFile, StreamFile)
	}
	return nil
}

// workspace notes the recording's seed directory.
func (l *loader) workspace(r *Recording) error {
	ws := filepath.Join(l.dir, WorkspaceDir)
	fi, err := os.Stat(ws)
	if err != nil {
		return nil
	}
	if !fi.IsDir() {
		return l.fail(WorkspaceDir, 0, "", "not a directory")
	}
	r.Workspace = ws
	return nil
}

// exists reports whether the recording has file (a regular file; anything
// else is refused as the loader refuses it).
func (l *loader) exists(file string) (bool, error) {
	f, found, err := l.open(file)
	if f != nil {
		f.Close()
	}
	return found, err
}

// expectedChild reads child.expected.jsonl, a headless run's one child
// log, as child 1 (beside session.<n>.jsonl it is an error).
func (l *loader) expectedChild(r *Recording) error {
	found, err := l.exists(ChildExpectedFile)
	if err != nil || !found {
		return err
	}
	if len(r.Children) > 0 {
		return l.fail(ChildExpectedFile, 0, "", "beside %s: a recording names its children one way", ChildFile(1))
	}
	c, err := l.loadChildFile(1, ChildExpectedFile)
	if err != nil {
		return err
	}
	switch {
	case c.Header.Origin != "subagent":
		return l.fail(c.File, 1, "origin", "want \"subagent\", got %q", c.Header.Origin)
	case c.Header.ParentSession != r.Header.ID:
		return l.fail(c.File, 1, "parentSession", "%q is not %s's id %q", c.Header.ParentSession, r.LogFile, r.Header.ID)
	}
	r.Children = append(r.Children, c)
	return nil
}

// checkResumeSeed checks the resumeSeed setting against the log: the
// seeded events come before its session/end-seed.
func checkResumeSeed(r *Recording) error {
	n := r.Settings.ResumeSeed
	if n == 0 {
		return nil
	}
	fail := func(format string, args ...any) error {
		return &Error{Recording: r.Name, File: SettingsFile, Field: "resumeSeed", Problem: fmt.Sprintf(format, args...) + settingsOrigin(r)}
	}
	end := slices.IndexFunc(r.Events, func(e Event) bool { return e.Type == session.KindEndSeed })
	switch {
	case end < 0:
		return fail("%d, but %s holds no session/end-seed (a resumed session's log marks where the resume began)", n, r.LogFile)
	case n > end:
		return fail("%d, but %s has %d events before its session/end-seed", n, r.LogFile, end)
	}
	return nil
}

// settingsOrigin says where the settings came from, when not the file.
func settingsOrigin(r *Recording) string {
	if r.SuiteSettings {
		return " (upstream's suite settings for " + r.Name + ")"
	}
	return ""
}
