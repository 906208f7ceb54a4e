package recording

import (
	"encoding/json"
	"slices"
	"strings"

	"github.com/dshsim/dshsim/pipeline/session"
)

// loadWeb reads a web recording: session.jsonl is both the model script
// and the user's side (upstream's scaffold replays the log's assistant
// messages and its e2e files type the log's user prompts), so the steps
// are the log's user prompts in order ([WebPrompts]).
func (l *loader) loadWeb(r *Recording) error {
	if err := l.workspace(r); err != nil {
		return err
	}
	if err := l.optional(r); err != nil {
		return err
	}
	h, evs, err := l.session(SessionFile)
	if err != nil {
		return err
	}
	r.Header, r.Events, r.LogFile = h, evs, SessionFile
	if found, err := l.exists(InputFile); err != nil {
		return err
	} else if found {
		return l.fail(InputFile, 0, "", "in a web recording: its steps are the prompts of %s", SessionFile)
	}
	if r.Settings.Prompt != "" {
		return l.fail(SettingsFile, 0, "prompt", "set, but a web recording's prompts are the user messages of %s", SessionFile)
	}
	prompts, err := WebPrompts(r.Name, r.Events)
	if err != nil {
		return err
	}
	if len(prompts) == 0 {
		return l.fail(SessionFile, 0, "", "no user/message with a user source: a web session types at least one prompt")
	}
	for _, p := range prompts {
		r.Input.Steps = append(r.Input.Steps, Step{Op: "prompt", Text: p})
	}
	return nil
}

// WebPrompts are the texts of the log's user messages with a user source,
// in order: what upstream's fixtureUserPrompts reads from a web fixture
// (each message's text blocks joined).
func WebPrompts(rec string, evs []Event) ([]string, error) {
	var out []string
	for _, e := range evs {
		if e.Type != session.KindUserMessage {
			continue
		}
		var d userMessageData
		if err := json.Unmarshal(e.Data, &d); err != nil {
			return nil, jsonError(rec, SessionFile, e.Data, e.Line, err)
		}
		if d.Source == nil || d.Source.Kind != "user" {
			continue
		}
		if d.Content == nil {
			return nil, sessionError(rec, e.Line, "data.content", "missing in a user's message")
		}
		var b strings.Builder
		for _, bl := range *d.Content {
			if bl.Type == "text" {
				b.WriteString(bl.Text)
			}
		}
		out = append(out, b.String())
	}
	return out, nil
}

// PolicyEvent is a policy event of a web log: a permission/preset,
// sandbox/mode or approval/policy, at the head or where a user's
// /permission switch wrote it.
type PolicyEvent struct {
	// Kind is the event type.
	Kind string
	// Value is its preset, mode or policy.
	Value string
	// Seq and Line locate it.
	Seq  int64
	Line int
}

// PolicyEvents are the log's permission/preset, sandbox/mode and
// approval/policy events in order, each value checked: a preset or mode
// is read-only, workspace-write or danger-full-access, a policy ask or
// never.
func (r *Recording) PolicyEvents() ([]PolicyEvent, error) {
	var out []PolicyEvent
	for _, e := range r.Events {
		field, valid := "", []string(nil)
		switch e.Type {
		case session.KindPermissionPreset:
			field, valid = "preset", sandboxModes
		case session.KindSandboxMode:
			field, valid = "mode", sandboxModes
		case session.KindApprovalPolicy:
			field, valid = "policy", []string{"ask", "never"}
		default:
			continue
		}
		var d map[string]json.RawMessage
		if err := json.Unmarshal(e.Data, &d); err != nil {
			return nil, jsonError(r.Name, r.LogFile, e.Data, e.Line, err)
		}
		var v string
		if raw, ok := d[field]; !ok {
			return nil, sessionError(r.Name, e.Line, "data."+field, "missing (required in %s)", e.Type)
		} else if err := json.Unmarshal(raw, &v); err != nil || !slices.Contains(valid, v) {
			return nil, sessionError(r.Name, e.Line, "data."+field, "want one of %s, got %s", strings.Join(valid, ", "), raw)
		}
		out = append(out, PolicyEvent{Kind: e.Type, Value: v, Seq: e.Seq, Line: e.Line})
	}
	return out, nil
}

var sandboxModes = []string{"read-only", "workspace-write", "danger-full-access"}

// webPolicy is the policy in force at a web session's first turn: the
// sandbox/mode and approval/policy events before its first turn/start
// (the web composition writes them at the head, from the preset the
// session starts with). A web log states its policy by these events, not
// by a runtime context's sections.
func (r *Recording) webPolicy() (Policy, error) {
	evs, err := r.PolicyEvents()
	if err != nil {
		return Policy{}, err
	}
	first := slices.IndexFunc(r.Events, func(e Event) bool { return e.Type == session.KindTurnStart })
	at := 0
	if first >= 0 {
		at = r.Events[first].Line
	}
	var p Policy
	for _, pe := range evs {
		if first >= 0 && pe.Seq > r.Events[first].Seq {
			break
		}
		switch pe.Kind {
		case session.KindSandboxMode:
			p.Mode, p.Line = pe.Value, pe.Line
		case session.KindApprovalPolicy:
			p.Approval = pe.Value
		}
	}
	switch {
	case p.Mode == "" && p.Approval == "":
		return Policy{}, sessionError(r.Name, at, "type", "no sandbox/mode or approval/policy event before the first turn: the web recording does not state its sandbox mode and approval policy")
	case p.Mode == "":
		return Policy{}, sessionError(r.Name, at, "type", "an approval/policy and no sandbox/mode event before the first turn")
	case p.Approval == "":
		return Policy{}, sessionError(r.Name, at, "type", "a sandbox/mode and no approval/policy event before the first turn")
	}
	return p, nil
}

// LogsInboxSplices reports whether the recorded composition logged its
// inbox's changes (agent/inbox/spliced): every front end's does, except
// the web composition of a recording whose log holds none (the web app's
// earlier sessions queued a prompt straight into its turn, unlogged).
func (r *Recording) LogsInboxSplices() bool {
	if r.Frontend != Web {
		return true
	}
	return slices.ContainsFunc(r.Events, func(e Event) bool { return e.Type == session.KindInboxSpliced })
}
