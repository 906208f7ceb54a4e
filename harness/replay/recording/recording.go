package recording

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"github.com/dshsim/dshsim/compaction"
	"github.com/dshsim/dshsim/pipeline/session"
)

// File names of a recording directory.
const (
	InputFile      = "input.json"
	SessionFile    = "session.jsonl"
	StdoutFile     = "stdout.expected.jsonl"
	WorkspaceDir   = "workspace"
	OverrideFile   = "replay.override.json"
	SettingsFile   = "dshsim.replay.json"
	ProjectionFile = "projection.expected.json"
)

// Error is a defect of a recording: the file, the 1-based line (0 when not tied
// to a line) and the JSON field path (empty when the whole line is bad).
type Error struct {
	// Recording is the recording name (its directory base name).
	Recording string
	// File is the file name inside the recording directory.
	File string
	// Line is 1-based; 0 means the whole file.
	Line int
	// Field is the JSON path of the bad field, e.g. "data.chunk.index".
	Field string
	// Problem says what is wrong.
	Problem string
}

// Error renders "<recording>/<file>:<line>: field <path>: <problem>".
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(filepath.Join(e.Recording, e.File))
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
	}
	b.WriteString(": ")
	if e.Field != "" {
		fmt.Fprintf(&b, "field %s: ", e.Field)
	}
	b.WriteString(e.Problem)
	return b.String()
}

// Step is one step of input.json.
type Step struct {
	// Op is the step operation (see [SupportedSteps]).
	Op string `json:"op"`
	// Text is the prompt text of a prompt or promptAndCancel step.
	Text string `json:"text,omitempty"`
	// WaitForFile, on promptAndCancel or cancel, cancels once this file
	// exists in the workspace (else, promptAndCancel, once the turn
	// started; cancel, at once).
	WaitForFile *WaitFile `json:"waitForFile,omitempty"`
	// Path is the workspace file a waitForFile step waits for.
	Path string `json:"path,omitempty"`
	// Child is the child log (session.<n>.jsonl) a waitForSubagentTurnEnd
	// step waits on (0: any child).
	Child int `json:"child,omitempty"`
	// MinimumTurn is the least turn a waitForTurnStart or
	// waitForSubagentTurnEnd step waits for (0: any).
	MinimumTurn int `json:"minimumTurn,omitempty"`
	// WaitForText is the assistant text a promptAndWaitForAgentMessage step
	// waits for (it does not wait for the prompt's answer).
	WaitForText string `json:"waitForText,omitempty"`
	// AdditionalDirectories, on newSessionExpectError, are sent with the
	// session/new request (which refuses them).
	AdditionalDirectories []string `json:"additionalDirectories,omitempty"`
	// TimeoutMs bounds a harness wait upstream (the replay's waits are its
	// own: every turn ends before the next step).
	TimeoutMs *int `json:"timeoutMs,omitempty"`
	// Content is a promptContent step's ACP prompt blocks.
	Content []PromptBlock `json:"content,omitempty"`
	// Type is the event type a waitForEventAfterTurnEnd step waits for
	// after the log's last turn/end.
	Type string `json:"type,omitempty"`
	// Phase is the goal phase a waitForGoalPhase step waits for (a
	// goal/change of the session's log holding it).
	Phase string `json:"phase,omitempty"`
	// At is where a web session's steer step is delivered (never read
	// from input.json: a web session's steps are its log's).
	At *SteerPoint `json:"-"`
}

// SteerPoint is where a web user steered a message into a running turn:
// after the model reply of Step in Turn, before the turn's next claim.
type SteerPoint struct {
	Turn, Step int
	// Line is the user/message's line in session.jsonl.
	Line int
	// Direct: the log's inbox splices show the message steered straight
	// into next-step (the composer's steer shortcut), never a queued row;
	// false when they show a queued row first or the log has no splices
	// (the e2e file's gesture: a queued row, then its Steer).
	Direct bool
}

// PromptBlock is one ACP prompt content block of a promptContent step: a
// text block, or an image block with base64 data and a MIME type.
type PromptBlock struct {
	Type     string `json:"type"`
	Text     string `json:"text,omitempty"`
	Data     string `json:"data,omitempty"`
	MimeType string `json:"mimeType,omitempty"`
}

// WaitFile names a file relative to the workspace.
type WaitFile struct {
	// Path is relative to the workspace.
	Path string `json:"path"`
	// TimeoutMs bounds the wait upstream.
	TimeoutMs *int `json:"timeoutMs,omitempty"`
}

// SupportedSteps are the input.json steps dsh-replay drives: initialize and
// newSession (the replay's session is the new session), newSessionExpectError
// (session/new with additionalDirectories, refused: no session), prompt
// (answered once the agent is quiescent), promptExpectError (a prompt whose
// turn fails: the JSON-RPC error answers it), promptAndCancel (the prompt,
// cancelled by the user once waitForFile exists or, without it, once the
// turn started), promptContent (a prompt of ACP content blocks, images
// admitted into the attachment store), promptAndWaitForAgentMessage (the
// prompt, until an assistant text holds waitForText), and the harness
// waits: waitForTurnEnd, waitForTurnStart (minimumTurn),
// waitForSubagentTurnEnd (child, minimumTurn), waitForFile (path, in the
// workspace), waitForTitleAfterTurnEnd (the model-made session title
// lands after its turn ended), waitForGoalPhase (a goal/change holding
// phase), waitForInboxMessage (an inbox splice inserting a message whose
// text holds text) and waitForEventAfterTurnEnd (an event of type after
// the log's last turn/end); and cancel (the user's session/cancel, once
// waitForFile exists when it is given: the running turn, a goal round's
// too, is cancelled and a prompt in flight answered cancelled).
var SupportedSteps = []string{"initialize", "newSession", "newSessionExpectError", "prompt", "promptExpectError", "promptAndCancel", "promptContent", "promptAndWaitForAgentMessage",
	"waitForTurnEnd", "waitForTurnStart", "waitForSubagentTurnEnd", "waitForFile", "waitForTitleAfterTurnEnd",
	"waitForGoalPhase", "waitForInboxMessage", "waitForEventAfterTurnEnd", "cancel"}

// GoalPhases are the phases a waitForGoalPhase step may wait for.
var GoalPhases = []string{"active", "paused", "blocked", "complete"}

// promptSteps are the steps that send a prompt as text (and need it).
var promptSteps = []string{"prompt", "promptExpectError", "promptAndCancel", "promptAndWaitForAgentMessage"}

// Answer is one permission answer of input.json.
type Answer struct {
	// Kind is allow_once, allow_always, reject_once or reject_always.
	Kind string `json:"kind"`
}

// Input is input.json.
type Input struct {
	// Steps drive the session in order.
	Steps []Step `json:"steps"`
	// PermissionAnswers are consumed FIFO by approval prompts.
	PermissionAnswers []Answer `json:"permissionAnswers,omitempty"`
	// SandboxMode and ApprovalPolicy (ours) are the policy a scenario is
	// recorded under (dsh-record): read-only, workspace-write or
	// danger-full-access (absent: danger-full-access), and ask or never
	// (absent: never under danger-full-access, else ask), upstream's
	// snapshot profile. A replay reads the policy from the log instead.
	SandboxMode    string `json:"sandboxMode,omitempty"`
	ApprovalPolicy string `json:"approvalPolicy,omitempty"`
}

// Policy is the scenario's sandbox mode and approval policy, defaults
// applied.
func (in Input) Policy() (mode, approval string) {
	mode, approval = in.SandboxMode, in.ApprovalPolicy
	if mode == "" {
		mode = "danger-full-access"
	}
	if approval == "" {
		approval = "ask"
		if mode == "danger-full-access" {
			approval = "never"
		}
	}
	return mode, approval
}

// LoadInput reads a scenario's input.json (a recording's, or a scenario
// dsh-record is given: input.json and optionally workspace/), within the
// default [Bounds].
func LoadInput(dir string) (Input, error) {
	name := filepath.Base(filepath.Clean(dir))
	var in Input
	l := &loader{name: name, dir: dir, bounds: Bounds{}.WithDefaults()}
	l.left = l.bounds.MaxBytes
	data, err := l.read(InputFile)
	if err != nil {
		return in, err
	}
	if err := decodeStrict(data, &in); err != nil {
		return in, jsonError(name, InputFile, data, 0, err)
	}
	return in, checkInput(name, data, in)
}

// Header is the first line of session.jsonl: the same header our own logs
// write (pipeline/session); in fixtures the id may read "{{sessionId}}" and the
// cwd "{{cwd}}".
type Header = session.Header

// Event is one logical event of session.jsonl (packed rows already expanded).
type Event struct {
	// Type is the event type, e.g. "tool/call".
	Type string `json:"type"`
	// Seq is the logical sequence number.
	Seq int64 `json:"seq"`
	// Time is the event time in ms (meaningless in fixtures).
	Time int64 `json:"time"`
	// Data is the event payload.
	Data json.RawMessage `json:"data"`
	// Line is the 1-based line of session.jsonl the event came from.
	Line int `json:"-"`
	// SurfaceOp is the event's surfaceOp as stored (nil when it has none).
	SurfaceOp json.RawMessage `json:"-"`
	// Earlier says the log stored the event in the earlier message shape
	// (Data is its current shape: see [Recording.EarlierShape]).
	Earlier bool `json:"-"`
}

// Recording is one loaded recording.
type Recording struct {
	// Name is the directory base name.
	Name string
	// Dir is the directory path.
	Dir string
	// Input is input.json.
	Input Input
	// Header is the session.jsonl header.
	Header Header
	// Events are the logical events, packed rows expanded.
	Events []Event
	// Stdout are the frames of stdout.expected.jsonl.
	Stdout []json.RawMessage
	// Workspace is the seed directory, "" when the recording has none.
	Workspace string
	// Override is replay.override.json, nil when absent.
	Override *Override
	SettingsSource
	Expectations
	// Children are the child sessions, session.<n>.jsonl in n order.
	Children []*Child
	// Frontend is the front end the recording comes from (its files say
	// which: [ClassifyFiles]).
	Frontend Frontend
	// LogFile is the file Header and Events come from: session.jsonl, or
	// the log a front end's suite compares (session.expected.jsonl,
	// parent.expected.jsonl, the stream's events).
	LogFile string
	// Stream is a headless run's stream-json records, nil when absent.
	Stream *Stream
	// bounds are the bounds it was read within.
	bounds Bounds
}

// SettingsSource are a recording's settings and where they came from.
type SettingsSource struct {
	// Settings are dshsim.replay.json; when it is absent, upstream's suite
	// settings for a scenario of this name ([SuiteSettings]), else zero.
	Settings Settings
	// Links are the settings' symlinks as found in the seed (those stored as
	// link stubs are restored in the replay's workspace).
	Links []SeedLink
	// HasSettings reports whether dshsim.replay.json exists.
	HasSettings bool
	// SuiteSettings reports that Settings come from [SuiteSettings] (upstream's
	// suite settings for a scenario of this name; no dshsim.replay.json).
	SuiteSettings bool
	// PromptFromLog reports that the prompt is the log's one user message:
	// an SDK run (JSON-RPC, Python SDK) with no input.json and no prompt
	// setting ([PromptFromLog]).
	PromptFromLog bool
}

// Expectations are what upstream's suite also expected of the session:
// the tool definitions and the system prompt the model saw.
type Expectations struct {
	// ToolSchemas is tool-schemas.expected.json, nil when absent.
	ToolSchemas *ToolSchemas
	// SystemPrompt are the paragraphs of the first prompt of
	// system-prompt.expected.md ([Paragraphs]), nil when it is absent.
	SystemPrompt []string
}

// IsRecording reports whether dir looks like a recording of any front end
// (has session.jsonl, input.json or a file only a front end beyond ACP
// writes).
func IsRecording(dir string) bool {
	for _, f := range append([]string{SessionFile, InputFile}, frontendFiles...) {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			return true
		}
	}
	return false
}

// Load reads the recording in dir within the default [Bounds]. Every
// defect is an [*Error].
func Load(dir string) (*Recording, error) { return LoadBounded(dir, Bounds{}) }

// LoadBounded reads the recording in dir within b (zero fields: the
// defaults): its files are sized before any is parsed, and a recording
// past b.MaxBytes is refused naming the file that passed it; the JSONL
// files are read line by line, a line past b.MaxLineBytes refused naming
// it; a file that is not valid UTF-8 is refused naming its line. Every
// defect is an [*Error].
func LoadBounded(dir string, b Bounds) (*Recording, error) {
	r := &Recording{Name: filepath.Base(filepath.Clean(dir)), Dir: dir, bounds: b.WithDefaults(), LogFile: SessionFile}
	l := &loader{name: r.Name, dir: dir, bounds: r.bounds}
	if err := l.measure(); err != nil {
		return nil, err
	}
	fe, err := DetectFrontend(dir, r.Name)
	if err != nil {
		return nil, err
	}
	if r.Frontend = fe; !fe.OverACP() {
		if err := l.loadFrontend(r); err != nil {
			return nil, err
		}
		return r, nil
	}
	data, err := l.read(InputFile)
	if err != nil {
		return nil, err
	}
	if err := decodeStrict(data, &r.Input); err != nil {
		return nil, jsonError(r.Name, InputFile, data, 0, err)
	}
	if err := checkInput(r.Name, data, r.Input); err != nil {
		return nil, err
	}
	if r.Header, r.Events, err = l.session(SessionFile); err != nil {
		return nil, err
	}
	if err := l.loadChildren(r); err != nil {
		return nil, err
	}
	if r.Stdout, err = l.stdout(); err != nil {
		return nil, err
	}
	if fi, err := os.Stat(filepath.Join(dir, WorkspaceDir)); err == nil {
		if !fi.IsDir() {
			return nil, l.fail(WorkspaceDir, 0, "", "not a directory")
		}
		r.Workspace = filepath.Join(dir, WorkspaceDir)
	}
	if err := l.optional(r); err != nil {
		return nil, err
	}
	if r.Settings.Prompt != "" {
		return nil, l.fail(SettingsFile, 0, "prompt", "set, but the recording has %s: its steps give the prompts", InputFile)
	}
	if fe == Goal {
		if err := l.goalLog(r); err != nil {
			return nil, err
		}
	}
	if err := l.notWeb(r); err != nil {
		return nil, err
	}
	return r, nil
}

// loader reads the files of the recording name in dir within bounds; left
// is what is left of bounds.MaxBytes.
type loader struct {
	name, dir string
	bounds    Bounds
	left      int64
}

// fail is an [*Error] in file of the recording.
func (l *loader) fail(file string, line int, field, format string, args ...any) error {
	return &Error{Recording: l.name, File: file, Line: line, Field: field, Problem: fmt.Sprintf(format, args...)}
}

// missing is the error of a file every recording has.
func (l *loader) missing(file string) error {
	return l.fail(file, 0, "", "missing file (a recording needs %s, %s and %s)", InputFile, SessionFile, StdoutFile)
}

// read reads a file every recording has.
func (l *loader) read(file string) ([]byte, error) {
	data, found, err := l.readOptional(file)
	if err == nil && !found {
		return nil, l.missing(file)
	}
	return data, err
}

// session parses a session log of the recording (file: session.jsonl or a
// child's), streaming it.
func (l *loader) session(file string) (Header, []Event, error) {
	lr, done, err := l.lines(file)
	if err != nil {
		return Header{}, nil, err
	}
	h, events, err := parseSession(l.name, lr)
	done()
	if err != nil {
		return Header{}, nil, retarget(err, file)
	}
	return h, events, nil
}

// stdout parses [StdoutFile], streaming it: one JSON-RPC 2.0 frame a line,
// blank lines skipped.
func (l *loader) stdout() ([]json.RawMessage, error) {
	lr, done, err := l.lines(StdoutFile)
	if err != nil {
		return nil, err
	}
	defer done()
	return parseStdout(l.name, lr)
}

func parseStdout(rec string, lr *lineReader) ([]json.RawMessage, error) {
	var frames []json.RawMessage
	for {
		ln, err := lr.next()
		if errors.Is(err, io.EOF) {
			return frames, nil
		}
		if err != nil {
			return nil, err
		}
		if len(bytes.TrimSpace(ln)) == 0 {
			continue
		}
		var v map[string]any
		if err := json.Unmarshal(ln, &v); err != nil {
			return nil, jsonError(rec, StdoutFile, ln, lr.n, err)
		}
		if v["jsonrpc"] != "2.0" {
			return nil, &Error{Recording: rec, File: StdoutFile, Line: lr.n, Field: "jsonrpc", Problem: fmt.Sprintf("want \"2.0\", got %s", show(v["jsonrpc"]))}
		}
		frames = append(frames, append(json.RawMessage(nil), ln...))
	}
}

// optional reads the files a recording may have: the override, the tool
// schemas and the settings (upstream's suite settings for the recording's
// name when it has no settings file).
func (l *loader) optional(r *Recording) error {
	data, found, err := l.readOptional(OverrideFile)
	if err != nil {
		return err
	}
	if found {
		if r.Override, err = parseOverride(r.Name, data); err != nil {
			return err
		}
	}
	if data, found, err = l.readOptional(ToolSchemasFile); err != nil {
		return err
	}
	if found {
		if r.ToolSchemas, err = parseToolSchemas(r.Name, data); err != nil {
			return err
		}
	}
	if data, found, err = l.readOptional(SystemPromptFile); err != nil {
		return err
	}
	if found {
		r.SystemPrompt = Paragraphs(string(data))
	}
	if data, found, err = l.readOptional(SettingsFile); err != nil {
		return err
	}
	switch s, ok := SuiteSettingsOf(r.Frontend)[r.Name]; {
	case found:
		if r.Settings, err = parseSettings(r.Name, data); err != nil {
			return err
		}
		r.HasSettings = true
	case ok:
		r.Settings, r.SuiteSettings = s, true
	}
	return l.seedLinks(r)
}

// seedLinks checks the settings' symlinks against the seed (an error names
// the path under workspace/ and where the setting came from).
func (l *loader) seedLinks(r *Recording) error {
	if len(r.Settings.Symlinks) == 0 {
		return nil
	}
	from := SettingsFile
	if r.SuiteSettings {
		from = "upstream's suite settings for " + r.Name
	}
	if r.Workspace == "" {
		return l.fail(WorkspaceDir, 0, "symlinks", "missing, but %s lists symlinks in it", from)
	}
	links, err := SeedLinks(r.Workspace, r.Settings.Symlinks)
	if err != nil {
		return l.fail(WorkspaceDir, 0, "symlinks", "%v (listed by %s)", err, from)
	}
	r.Links = links
	return nil
}

var knownAnswers = map[string]bool{"allow_once": true, "allow_always": true, "reject_once": true, "reject_always": true}

func checkInput(name string, data []byte, in Input) error {
	fail := func(field, format string, args ...any) error {
		return &Error{Recording: name, File: InputFile, Line: lineOfKey(data, lastKey(field)), Field: field, Problem: fmt.Sprintf(format, args...)}
	}
	if in.Steps == nil {
		return fail("steps", "missing")
	}
	for i, s := range in.Steps {
		f := fmt.Sprintf("steps[%d].op", i)
		if s.Op == "" {
			return fail(f, "missing")
		}
		if !slices.Contains(SupportedSteps, s.Op) {
			return &Error{Recording: name, File: InputFile, Line: lineOfValue(data, s.Op), Field: f,
				Problem: fmt.Sprintf("step %q is not supported by dsh-replay (supported: %s)", s.Op, strings.Join(SupportedSteps, ", "))}
		}
		if slices.Contains(promptSteps, s.Op) && s.Text == "" {
			return fail(fmt.Sprintf("steps[%d].text", i), "a %s step needs a non-empty text", s.Op)
		}
		if err := checkWaitStep(name, data, i, s); err != nil {
			return err
		}
		if s.Op == "promptContent" && len(s.Content) == 0 {
			return fail(fmt.Sprintf("steps[%d].content", i), "a promptContent step needs content blocks")
		}
		for j, b := range s.Content {
			if b.Type != "text" && b.Type != "image" {
				return fail(fmt.Sprintf("steps[%d].content[%d].type", i, j), "want text or image, got %q", b.Type)
			}
		}
		if s.WaitForFile != nil {
			field := fmt.Sprintf("steps[%d].waitForFile", i)
			switch p := s.WaitForFile.Path; {
			case s.Op != "promptAndCancel" && s.Op != "cancel":
				return fail(field, "only a promptAndCancel or cancel step waits for a file")
			case p == "" || filepath.IsAbs(p) || !filepath.IsLocal(p):
				return &Error{Recording: name, File: InputFile, Line: lineOfKey(data, "waitForFile"), Field: field + ".path",
					Problem: fmt.Sprintf("want a path inside the workspace, got %q", p)}
			}
		}
		if s.AdditionalDirectories != nil && s.Op != "newSessionExpectError" {
			return fail(fmt.Sprintf("steps[%d].additionalDirectories", i), "only a newSessionExpectError step sends additional directories")
		}
	}
	if m := in.SandboxMode; m != "" && m != "read-only" && m != "workspace-write" && m != "danger-full-access" {
		return &Error{Recording: name, File: InputFile, Line: lineOfKey(data, "sandboxMode"), Field: "sandboxMode",
			Problem: fmt.Sprintf("want read-only, workspace-write or danger-full-access, got %q", m)}
	}
	if p := in.ApprovalPolicy; p != "" && p != "ask" && p != "never" {
		return &Error{Recording: name, File: InputFile, Line: lineOfKey(data, "approvalPolicy"), Field: "approvalPolicy",
			Problem: fmt.Sprintf("want ask or never, got %q", p)}
	}
	for i, a := range in.PermissionAnswers {
		if !knownAnswers[a.Kind] {
			return &Error{Recording: name, File: InputFile, Line: lineOfValue(data, a.Kind), Field: fmt.Sprintf("permissionAnswers[%d].kind", i),
				Problem: fmt.Sprintf("want allow_once, allow_always, reject_once or reject_always, got %q", a.Kind)}
		}
	}
	return nil
}

// checkWaitStep checks the fields of a waiting step.
func checkWaitStep(name string, data []byte, i int, s Step) error {
	fail := func(field, format string, args ...any) error {
		return &Error{Recording: name, File: InputFile, Line: lineOfKey(data, field), Field: fmt.Sprintf("steps[%d].%s", i, field), Problem: fmt.Sprintf(format, args...)}
	}
	switch {
	case s.Op == "waitForFile" && (s.Path == "" || filepath.IsAbs(s.Path) || !filepath.IsLocal(s.Path)):
		return fail("path", "want a path inside the workspace, got %q", s.Path)
	case s.Op != "waitForFile" && s.Path != "":
		return fail("path", "only a waitForFile step has a path")
	case s.Op == "promptAndWaitForAgentMessage" && s.WaitForText == "":
		return fail("waitForText", "a promptAndWaitForAgentMessage step needs the text it waits for")
	case s.Child < 0 || s.MinimumTurn < 0:
		return fail("minimumTurn", "want a non-negative number")
	case s.Child > 0 && s.Op != "waitForSubagentTurnEnd":
		return fail("child", "only a waitForSubagentTurnEnd step names a child")
	case s.Op == "waitForEventAfterTurnEnd" && s.Type == "":
		return fail("type", "a waitForEventAfterTurnEnd step needs the event type it waits for")
	case s.Op != "waitForEventAfterTurnEnd" && s.Type != "":
		return fail("type", "only a waitForEventAfterTurnEnd step has a type")
	case s.Op == "waitForInboxMessage" && s.Text == "":
		return fail("text", "a waitForInboxMessage step needs the text it waits for")
	case s.Op == "waitForGoalPhase" && !slices.Contains(GoalPhases, s.Phase):
		return fail("phase", "want one of %s, got %q", strings.Join(GoalPhases, ", "), s.Phase)
	case s.Op != "waitForGoalPhase" && s.Phase != "":
		return fail("phase", "only a waitForGoalPhase step has a phase")
	}
	return nil
}

// decodeStrict decodes data into v, rejecting unknown fields and trailing data.
func decodeStrict(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("trailing data after the JSON value")
	}
	return nil
}

// settingsGroups are the Go names of the groups Settings embeds, which
// encoding/json puts in an error's field path though no key names them.
var settingsGroups = func() map[string]bool {
	groups := map[string]bool{}
	for _, f := range reflect.VisibleFields(reflect.TypeFor[Settings]()) {
		if f.Anonymous {
			groups[f.Name] = true
		}
	}
	return groups
}()

// jsonPath is the key path of a decoding error's field: the path
// encoding/json reports, the embedded groups' names left out.
func jsonPath(field string) string {
	var keys []string
	for _, k := range strings.Split(field, ".") {
		if !settingsGroups[k] {
			keys = append(keys, k)
		}
	}
	return strings.Join(keys, ".")
}

// jsonError turns a JSON decoding error into an *Error. line is the line the
// bytes start on (0: data is a whole file, the line is computed from the offset).
func jsonError(rec, file string, data []byte, line int, err error) *Error {
	e := &Error{Recording: rec, File: file, Line: line}
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		if line == 0 {
			e.Line = lineAt(data, syn.Offset)
		}
		if syn.Offset >= int64(len(bytes.TrimRight(data, " \r\n\t"))) || strings.Contains(syn.Error(), "unexpected end") {
			e.Problem = "truncated JSON: " + syn.Error()
		} else {
			e.Problem = "invalid JSON: " + syn.Error()
		}
	case errors.As(err, &typ):
		if line == 0 {
			e.Line = lineAt(data, typ.Offset)
		}
		e.Field = jsonPath(typ.Field)
		e.Problem = fmt.Sprintf("want %s, got JSON %s", goTypeName(typ.Type.Kind().String()), typ.Value)
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		key := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
		if line == 0 {
			e.Line = lineOfKey(data, key)
		}
		e.Field = key
		e.Problem = "unknown field"
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
		e.Problem = "truncated JSON: unexpected end of input"
	default:
		if line == 0 && len(bytes.TrimSpace(data)) == 0 {
			e.Line = 1
		}
		e.Problem = err.Error()
	}
	if e.Line == 0 {
		e.Line = 1
	}
	return e
}

func goTypeName(kind string) string {
	switch kind {
	case "int", "int64", "int32", "float64", "uint", "uint64":
		return "number"
	case "string":
		return "string"
	case "bool":
		return "boolean"
	case "slice":
		return "array"
	case "struct", "map":
		return "object"
	}
	return kind
}

func lineAt(data []byte, off int64) int {
	if off > int64(len(data)) {
		off = int64(len(data))
	}
	if off < 0 {
		off = 0
	}
	return bytes.Count(data[:off], []byte("\n")) + 1
}

func lineOfKey(data []byte, key string) int {
	if key == "" {
		return 0
	}
	i := bytes.Index(data, []byte(`"`+key+`"`))
	if i < 0 {
		return 0
	}
	return lineAt(data, int64(i))
}

func lineOfValue(data []byte, v string) int {
	b, _ := json.Marshal(v)
	i := bytes.Index(data, b)
	if i < 0 {
		return 0
	}
	return lineAt(data, int64(i))
}

func lastKey(path string) string {
	if i := strings.LastIndex(path, "."); i >= 0 {
		path = path[i+1:]
	}
	if i := strings.Index(path, "["); i >= 0 {
		path = path[:i]
	}
	return path
}

func show(v any) string {
	if v == nil {
		return "nothing"
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// NoApprovalPlugin is the approval of a recording of a front end beyond
// ACP whose runtime context has a sandbox:policy section and no
// approval:policy one: its composition had no approval plugin.
const NoApprovalPlugin = "none"

// Policy is the sandbox mode and approval policy a recording states in its
// first runtime-context message.
type Policy struct {
	// Mode is the sandbox mode (read-only, workspace-write, danger-full-access).
	Mode string
	// Approval is "ask" or "never" ([NoApprovalPlugin] for a front end's
	// composition without the approval plugin).
	Approval string
	// Line is the session.jsonl line of the runtime-context message.
	Line int
	// Default says the log states no policy, and Mode and Approval are
	// its front end's default (a web log in the earlier shape).
	Default bool
}

// runtimeContext reports whether a user/message is a runtime-context
// snapshot: a plugin's message other than a compaction's checkpoint.
func (d userMessageData) runtimeContext() bool {
	return d.Source != nil && d.Source.Kind == "plugin" && d.Source.Plugin != compaction.CheckpointPlugin
}

// HasRuntimeContext reports whether the recording holds a user/message with
// a plugin source (a runtime-context snapshot; a compaction's checkpoint
// is none).
func (r *Recording) HasRuntimeContext() bool {
	for _, e := range r.Events {
		if e.Type != session.KindUserMessage {
			continue
		}
		var d userMessageData
		if json.Unmarshal(e.Data, &d) == nil && d.runtimeContext() {
			return true
		}
	}
	return false
}

// Policy reads the sandbox mode and approval policy from the recording's first
// runtime-context user/message (sections sandbox:policy and approval:policy);
// an error names the log it read (LogFile).
func (r *Recording) Policy() (Policy, error) {
	p, err := r.policy()
	if err != nil && r.LogFile != "" && r.LogFile != SessionFile {
		err = retarget(err, r.LogFile)
	}
	return p, err
}

func (r *Recording) policy() (Policy, error) {
	if r.Frontend == Web {
		return r.webPolicy()
	}
	for _, e := range r.Events {
		if e.Type != session.KindUserMessage {
			continue
		}
		var d userMessageData
		if err := json.Unmarshal(e.Data, &d); err != nil {
			return Policy{}, jsonError(r.Name, SessionFile, e.Data, e.Line, err)
		}
		if !d.runtimeContext() {
			continue
		}
		p := Policy{Line: e.Line}
		for i, s := range d.Source.Sections {
			field := fmt.Sprintf("data.source.sections[%d].text", i)
			switch s.Name {
			case "sandbox:policy":
				const prefix = "Current DSH file policy: "
				rest, ok := strings.CutPrefix(s.Text, prefix)
				mode, _, dot := strings.Cut(rest, ".")
				if !ok || !dot {
					return Policy{}, sessionError(r.Name, e.Line, field, "want %q followed by the mode and a full stop, got %q", prefix, s.Text)
				}
				switch mode {
				case "read-only", "workspace-write", "danger-full-access":
					p.Mode = mode
				default:
					return Policy{}, sessionError(r.Name, e.Line, field, "unknown sandbox mode %q", mode)
				}
			case "approval:policy":
				switch {
				case strings.HasPrefix(s.Text, "Approval policy: ask."):
					p.Approval = "ask"
				case strings.HasPrefix(s.Text, "Approval prompts are disabled in this session"):
					p.Approval = "never"
				default:
					return Policy{}, sessionError(r.Name, e.Line, field, "neither the ask nor the never approval sentence: %q", s.Text)
				}
			}
		}
		if p.Mode == "" {
			return Policy{}, sessionError(r.Name, e.Line, "data.source.sections", "no sandbox:policy section in the first runtime-context message")
		}
		if p.Approval == "" && r.Frontend != ACP && r.Frontend != "" {
			p.Approval = NoApprovalPlugin // a composition without the approval plugin
		}
		if p.Approval == "" {
			return Policy{}, sessionError(r.Name, e.Line, "data.source.sections", "no approval:policy section in the first runtime-context message")
		}
		return p, nil
	}
	return Policy{}, sessionError(r.Name, 0, "", "no runtime-context user/message: the recording does not state its sandbox mode and approval policy")
}
