package oracle

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"slices"
	"strings"

	"github.com/dshsim/dshsim/harness/replay/recording"
	"github.com/dshsim/dshsim/internal/jsjson"
	"github.com/dshsim/dshsim/pipeline/session"
)

// Script is a constructed model script: the prompts (or input steps) a run
// gets, and per turn the model's steps, each a list of tool calls, a text or
// raw chunks. Its JSON form is a gen/specs/<name>.json file.
type Script struct {
	// Prompts become one prompt step each (unless Steps is given).
	Prompts []string `json:"prompts,omitempty"`
	// Steps are the input steps after initialize and newSession
	// (promptAndCancel, waitForTurnEnd, ...), used instead of Prompts.
	Steps []recording.Step `json:"steps,omitempty"`
	// AllSteps are every input step, initialize included: a scenario
	// without newSession (a refused session/new). Neither Prompts nor Steps
	// go with it.
	AllSteps []recording.Step `json:"allSteps,omitempty"`
	// Turns holds the model's steps per turn. llm-replay hands out the steps
	// in order, not per turn: a cancelled turn's steps end with the call
	// that is cancelled, and the next prompt gets the step after it. A turn
	// may be empty (a prompt the model never sees: a hook blocked it), and
	// a script whose input opens no session has no turns.
	Turns [][]Step `json:"turns"`
	// Workspace seeds the workspace: relative path to content.
	Workspace map[string]string `json:"workspace,omitempty"`
	// PermissionAnswers answer approval prompts in order (allow_once,
	// reject_once; none left: cancelled).
	PermissionAnswers []recording.Answer `json:"permissionAnswers,omitempty"`
	// Override is replay.override.json's content (upstream's script
	// override: its entries, or {patches}; a throw, a hang), written as it
	// is given.
	Override json.RawMessage `json:"override,omitempty"`
	// Children are the child sessions' scripts (session.<n>.jsonl, n from
	// 1 in this order): upstream's llm-replay binds each to the child that
	// calls the model n-th. Their calls are numbered after the session's.
	Children []Child `json:"children,omitempty"`
}

// Child is one child session's script: its turns, and the session that
// starts it (Parent: 0 the primary session, n the n-th child).
type Child struct {
	Parent int      `json:"parent,omitempty"`
	Turns  [][]Step `json:"turns"`
}

// Step is one model reply: tool calls (finish reason tool-calls), raw
// chunks as llm-replay plays them (a finish of max-tokens or error, an
// unfinished block), or else a text (finish reason stop).
type Step struct {
	Calls  []Call            `json:"calls,omitempty"`
	Text   string            `json:"text,omitempty"`
	Chunks []json.RawMessage `json:"chunks,omitempty"`
}

// Call is one tool call. Its JSON form is [name, arguments]; Args is sent as
// the model's arguments text, spelled as the Python generator spelled it
// (see [ArgumentsText]).
type Call struct {
	Name string
	Args json.RawMessage
}

// MarshalJSON writes [name, args].
func (c Call) MarshalJSON() ([]byte, error) {
	args := c.Args
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	return json.Marshal([]any{c.Name, args})
}

// UnmarshalJSON reads [name, args].
func (c *Call) UnmarshalJSON(b []byte) error {
	var pair []json.RawMessage
	if err := json.Unmarshal(b, &pair); err != nil || len(pair) != 2 {
		return errors.New(`a call is [name, arguments]`)
	}
	if err := json.Unmarshal(pair[0], &c.Name); err != nil || c.Name == "" {
		return errors.New(`a call's name is a non-empty string`)
	}
	c.Args = append(json.RawMessage(nil), pair[1]...)
	return nil
}

// LoadScript reads a gen/specs file (unknown keys are errors).
func LoadScript(file string) (*Script, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	s, err := ParseScript(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return s, nil
}

// ParseScript decodes and checks a script.
func ParseScript(data []byte) (*Script, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var s Script
	if err := dec.Decode(&s); err != nil {
		return nil, err
	}
	return &s, s.Check()
}

// Check reports the first thing that makes the script unusable.
func (s *Script) Check() error {
	if err := s.checkInput(); err != nil {
		return err
	}
	for ti, t := range s.Turns {
		for si, st := range t {
			if err := st.check(); err != nil {
				return fmt.Errorf("turns[%d][%d]%w", ti, si, err)
			}
		}
	}
	for p := range s.Workspace {
		if p == "" || path.IsAbs(p) || strings.HasPrefix(path.Clean(p), "..") || path.Clean(p) != p {
			return fmt.Errorf("workspace: %q is not a clean relative path", p)
		}
	}
	if s.Override != nil && !isObject(s.Override) && !isArray(s.Override) {
		return errors.New("override: not a JSON array or object (replay.override.json's content: its entries, or {patches})")
	}
	for ci, c := range s.Children {
		if c.Parent < 0 || c.Parent > ci {
			return fmt.Errorf("children[%d].parent: %d is not the session (0) or an earlier child (1 to %d)", ci, c.Parent, ci)
		}
		if len(c.Turns) == 0 {
			return fmt.Errorf("children[%d].turns: no turn", ci)
		}
		for ti, t := range c.Turns {
			for si, st := range t {
				if err := st.check(); err != nil {
					return fmt.Errorf("children[%d].turns[%d][%d]%w", ci, ti, si, err)
				}
			}
		}
	}
	return nil
}

// checkInput checks the input steps against the turns: a script gives
// prompts, steps or every step; one whose input opens a session has a model
// step, one whose input opens none (no newSession) has no turn.
func (s *Script) checkInput() error {
	steps := 0
	for _, t := range s.Turns {
		steps += len(t)
	}
	if len(s.AllSteps) == 0 {
		switch {
		case len(s.Prompts) == 0 && len(s.Steps) == 0:
			return errors.New("prompts: neither prompts, steps nor allSteps")
		case steps == 0:
			return errors.New("turns: no model step")
		}
		return nil
	}
	if len(s.Prompts) > 0 || len(s.Steps) > 0 {
		return errors.New("allSteps: every input step is given, so prompts and steps are not")
	}
	opens := slices.ContainsFunc(s.AllSteps, func(st recording.Step) bool { return st.Op == "newSession" })
	switch {
	case opens && steps == 0:
		return errors.New("turns: no model step")
	case !opens && len(s.Turns) > 0:
		return errors.New("turns: allSteps opens no session (no newSession), so no model step is played")
	}
	return nil
}

// check reports what makes one step unusable (its error starts with the
// field path below the step).
func (st Step) check() error {
	if len(st.Chunks) > 0 {
		if len(st.Calls) > 0 || st.Text != "" {
			return errors.New(": chunks go alone, without calls or text")
		}
		for ci, c := range st.Chunks {
			var t struct {
				Type string `json:"type"`
			}
			if !isObject(c) || json.Unmarshal(c, &t) != nil || t.Type == "" {
				return fmt.Errorf(".chunks[%d]: not a chunk (a JSON object with a type)", ci)
			}
		}
		return nil
	}
	if len(st.Calls) > 0 && st.Text != "" {
		return errors.New(": calls and text: a step is one or the other")
	}
	for ci, c := range st.Calls {
		if !json.Valid(c.Args) {
			return fmt.Errorf(".calls[%d] (%s): arguments are not JSON", ci, c.Name)
		}
	}
	return nil
}

// isArray reports whether b is one JSON array.
func isArray(b json.RawMessage) bool {
	var a []json.RawMessage
	return json.Unmarshal(b, &a) == nil && a != nil
}

// isObject reports whether b is one JSON object.
func isObject(b json.RawMessage) bool {
	var m map[string]json.RawMessage
	return json.Unmarshal(b, &m) == nil && m != nil
}

// Calls counts the script's tool calls, its children's included.
func (s *Script) Calls() int {
	n := 0
	for _, turns := range s.sessions() {
		for _, t := range turns {
			for _, st := range t {
				n += len(st.Calls)
			}
		}
	}
	return n
}

// sessions are the turns of the session, then of each child.
func (s *Script) sessions() [][][]Step {
	out := [][][]Step{s.Turns}
	for _, c := range s.Children {
		out = append(out, c.Turns)
	}
	return out
}

// Clone is a deep copy.
func (s *Script) Clone() *Script {
	b, err := json.Marshal(s)
	if err != nil {
		panic("oracle: a script that marshalled once fails to marshal: " + err.Error())
	}
	var c Script
	if err := json.Unmarshal(b, &c); err != nil {
		panic("oracle: a marshalled script does not unmarshal: " + err.Error())
	}
	return &c
}

// JSON is the script's gen/specs form (indented, keys in field order).
func (s *Script) JSON() []byte {
	b, err := jsjson.MarshalIndent(s, " ")
	if err != nil {
		panic("oracle: marshal a script: " + err.Error())
	}
	return append(b, '\n')
}

// chunk is one assistant/chunk event of the model script.
type chunk struct {
	Type string    `json:"type"`
	Seq  int       `json:"seq"`
	Time int       `json:"time"`
	Data chunkData `json:"data"`
}

type chunkData struct {
	Turn  int `json:"turn"`
	Step  int `json:"step"`
	Chunk any `json:"chunk"`
}

// scriptHeader is the model script's session header (upstream's refresh
// replaces the id and cwd); a child's names its parent, origin and depth.
type scriptHeader struct {
	Type            string `json:"type"`
	Version         int    `json:"version"`
	ID              string `json:"id"`
	CreatedAt       int    `json:"createdAt"`
	Cwd             string `json:"cwd"`
	ParentSession   string `json:"parentSession,omitempty"`
	Origin          string `json:"origin,omitempty"`
	DelegationDepth int    `json:"delegationDepth"`
}

// scriptID is the id of session n of a script (0: the primary; llm-replay
// keys nothing on it, the refresh replaces it).
func scriptID(n int) string { return fmt.Sprintf("00000000-0000-4000-8000-%012d", n) }

// Encode writes the script as upstream's fixture wants it, keyed by path
// relative to the scenario directory: session.jsonl (the header and the
// assistant/chunk events llm-replay plays) and session.<n>.jsonl for each
// child (its header names its parent, origin subagent and its depth;
// created at n), input.json, an empty stdout.expected.jsonl (the refresh
// writes both), workspace/<path>, and replay.override.json when the script
// has an override. Call ids are call_<index in step>_probe<n>, n counting
// every call, the session's first, then each child's.
func (s *Script) Encode() (map[string][]byte, error) {
	if err := s.Check(); err != nil {
		return nil, err
	}
	input, err := s.input()
	if err != nil {
		return nil, err
	}
	files := map[string][]byte{recording.InputFile: input, recording.StdoutFile: {}}
	var depth []int // of each session, by number
	n := 0
	for i, turns := range s.sessions() {
		h := scriptHeader{Type: "session", ID: scriptID(i), CreatedAt: i, Cwd: "{{cwd}}"}
		name := recording.SessionFile
		if i > 0 {
			c := s.Children[i-1]
			h.ParentSession, h.Origin, h.DelegationDepth = scriptID(c.Parent), "subagent", depth[c.Parent]+1
			name = recording.ChildFile(i)
		}
		depth = append(depth, h.DelegationDepth)
		log, err := encodeLog(h, turns, &n)
		if err != nil {
			return nil, err
		}
		files[name] = log
	}
	for p, content := range s.Workspace {
		files[path.Join(recording.WorkspaceDir, p)] = []byte(content)
	}
	if s.Override != nil {
		var b bytes.Buffer
		if err := json.Indent(&b, s.Override, "", "  "); err != nil {
			return nil, fmt.Errorf("override: %w", err)
		}
		files[recording.OverrideFile] = b.Bytes()
	}
	return files, nil
}

// encodeLog is one session's script: its header, then a chunk event per
// chunk of each step; n counts the calls so far.
func encodeLog(h scriptHeader, turns [][]Step, n *int) ([]byte, error) {
	var log bytes.Buffer
	enc := json.NewEncoder(&log)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(h); err != nil {
		return nil, err
	}
	seq := 0
	for ti, steps := range turns {
		for si, st := range steps {
			for _, c := range stepChunks(st, n) {
				if err := enc.Encode(chunk{Type: session.KindAssistantChunk, Seq: seq, Data: chunkData{Turn: ti + 1, Step: si + 1, Chunk: c}}); err != nil {
					return nil, err
				}
				seq++
			}
		}
	}
	return log.Bytes(), nil
}

// stepChunks are the chunks of one reply, in the key order of upstream's
// fixtures; n counts the calls so far.
func stepChunks(st Step, n *int) []any {
	if len(st.Chunks) > 0 {
		out := make([]any, len(st.Chunks))
		for i, c := range st.Chunks {
			out[i] = c
		}
		return out
	}
	if len(st.Calls) == 0 {
		return []any{
			blockStart{Type: "block-start", Index: 0, BlockType: "text"},
			textDelta{Type: "text-delta", Index: 0, Text: st.Text},
			blockEnd{Type: "block-end", Index: 0, Block: textBlock{Type: "text", Text: st.Text}},
			usage(1),
			finish{Type: "finish", Reason: reason{Kind: "stop"}},
		}
	}
	var out []any
	for k, c := range st.Calls {
		*n++
		id := fmt.Sprintf("call_%02d_probe%04d", k, *n)
		args := ArgumentsText(c.Args)
		out = append(out,
			blockStart{Type: "block-start", Index: k, BlockType: "tool-call"},
			callDelta{Type: "tool-call-delta", Index: k, ID: id, Name: c.Name, ArgumentsDelta: args},
			blockEnd{Type: "block-end", Index: k, Block: callBlock{Type: "tool-call", ID: id, Name: c.Name, Arguments: args}})
	}
	return append(out, usage(10), finish{Type: "finish", Reason: reason{Kind: "tool-calls"}})
}

type blockStart struct {
	Type      string `json:"type"`
	Index     int    `json:"index"`
	BlockType string `json:"blockType"`
}

type callDelta struct {
	Type           string `json:"type"`
	Index          int    `json:"index"`
	ID             string `json:"id"`
	Name           string `json:"name"`
	ArgumentsDelta string `json:"argumentsDelta"`
}

type textDelta struct {
	Type  string `json:"type"`
	Index int    `json:"index"`
	Text  string `json:"text"`
}

type blockEnd struct {
	Type  string `json:"type"`
	Index int    `json:"index"`
	Block any    `json:"block"`
}

type callBlock struct {
	Type      string `json:"type"`
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type textBlock struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type finish struct {
	Type   string `json:"type"`
	Reason reason `json:"reason"`
}

type reason struct {
	Kind string `json:"kind"`
}

type usageChunk struct {
	Type  string     `json:"type"`
	Usage usageCount `json:"usage"`
}

type usageCount struct {
	InputTokens     int `json:"inputTokens"`
	OutputTokens    int `json:"outputTokens"`
	CacheReadTokens int `json:"cacheReadTokens"`
	ReasoningTokens int `json:"reasoningTokens"`
}

func usage(out int) usageChunk {
	return usageChunk{Type: "usage", Usage: usageCount{InputTokens: 100, OutputTokens: out}}
}

// input is input.json: AllSteps, or initialize, newSession, then Steps or
// one prompt per entry of Prompts; the permission answers when there are
// any.
func (s *Script) input() ([]byte, error) {
	in := recording.Input{Steps: []recording.Step{{Op: "initialize"}, {Op: "newSession"}}, PermissionAnswers: s.PermissionAnswers}
	if len(s.AllSteps) > 0 {
		in.Steps = s.AllSteps
	} else if len(s.Steps) > 0 {
		in.Steps = append(in.Steps, s.Steps...)
	} else {
		for _, p := range s.Prompts {
			in.Steps = append(in.Steps, recording.Step{Op: "prompt", Text: p})
		}
	}
	return jsjson.MarshalIndent(in, "  ")
}

// inputFacts is what a pass needs to know of input.json: whether its steps
// need vitest's vi.waitFor (anything but initialize, newSession and
// prompt), and whether it opens a session (a newSession step) at all.
type inputFacts struct{ vitest, session bool }

func factsOf(input []byte) (inputFacts, error) {
	var in recording.Input
	if err := json.Unmarshal(input, &in); err != nil {
		return inputFacts{}, fmt.Errorf("%s: %w", recording.InputFile, err)
	}
	var f inputFacts
	for _, st := range in.Steps {
		switch st.Op {
		case "newSession":
			f.session = true
		case "initialize", "prompt":
		default:
			f.vitest = true
		}
	}
	return f, nil
}
