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
	if a := r.Settings.UIAnswer; a != "" && a != "allowed-once" && a != "rejected" {
		return l.fail(SettingsFile, 0, "uiAnswer", "want allowed-once or rejected, got %q%s", a, settingsOrigin(r))
	}
	for i, q := range r.Settings.UIQuestions {
		switch {
		case q.ID == "":
			return l.fail(SettingsFile, 0, "uiQuestions", "uiQuestions[%d]: no id%s", i, settingsOrigin(r))
		case q.Selected == nil:
			return l.fail(SettingsFile, 0, "uiQuestions", "uiQuestions[%d] (%s): no selected list (an empty one selects nothing)%s", i, q.ID, settingsOrigin(r))
		case slices.ContainsFunc(r.Settings.UIQuestions[:i], func(o QuestionAnswer) bool { return o.ID == q.ID }):
			return l.fail(SettingsFile, 0, "uiQuestions", "uiQuestions[%d]: question %q answered twice%s", i, q.ID, settingsOrigin(r))
		}
	}
	if r.Settings.Prompt != "" {
		return l.fail(SettingsFile, 0, "prompt", "set, but a web recording's prompts are the user messages of %s", SessionFile)
	}
	steps, err := WebSteps(r.Name, r.Events)
	if err != nil {
		return err
	}
	if err := noStop(r.Name, r.Events); err != nil {
		return err
	}
	if !slices.ContainsFunc(steps, func(s Step) bool { return s.Op != PermissionOp }) {
		return l.fail(SessionFile, 0, "", "no user/message with a user source and no /goal or /plan command: a web session types at least one prompt or command that starts a turn")
	}
	r.Input.Steps = steps
	return nil
}

// The steps of a web session's slash commands, each named for its
// command: /permission switches to the preset Text (read-only,
// workspace-write or danger-full-access) between turns; /goal runs the
// goal command on its raw input Text (a new objective creates and arms a
// goal, whose rounds then run); /plan enters plan mode with its raw input
// Text as the turn's message ("off" leaves plan mode).
const (
	PermissionOp = "permission"
	GoalOp       = "goal"
	PlanOp       = "plan"
)

// WebCommands are the web app's slash commands a replay drives.
var WebCommands = []string{PermissionOp, GoalOp, PlanOp}

// SteerOp is a web session's steer step: a message the user steered into
// a running turn (the web app's Steer on a queued message), delivered at
// its [SteerPoint] (Step.At).
const SteerOp = "steer"

// steerPoints places each user's message of a web log that was steered
// into a running turn, keyed by its line: a user's message inside a turn
// after a model reply of that turn (an assistant/message) was steered
// while the step of the last such reply ran, and the turn's next claim
// entered it (after that step's tool results in the web app's earlier
// shape, at the next step's start in rc.8's). A user's message inside a
// turn after its first and before any model reply of the turn cannot be
// placed (the turn's opening claimed it with its prompt): it is refused.
func steerPoints(rec string, evs []Event) (map[int]SteerPoint, error) {
	out := map[int]SteerPoint{}
	spliced, queued := queuedRows(evs)
	turn, users := 0, 0
	var reply *Event // the turn's last model reply
	for i, e := range evs {
		switch e.Type {
		case session.KindTurnStart:
			var d turnData
			if json.Unmarshal(e.Data, &d) == nil && d.Turn != nil {
				turn = *d.Turn
			}
			reply, users = nil, 0
		case session.KindTurnEnd:
			turn = 0
		case session.KindAssistantMessage:
			reply = &evs[i]
		case session.KindUserMessage:
			if turn == 0 || !userSourced(e) {
				continue
			}
			users++
			if reply == nil {
				if users > 1 {
					return nil, sessionError(rec, e.Line, "data.source", "a user's message inside turn %d, after its prompt and before any model reply of the turn: the replay steers a message in after a model reply only (this one the turn's opening claimed with its prompt)", turn)
				}
				continue
			}
			var d stepData
			if err := json.Unmarshal(reply.Data, &d); err != nil || d.Step == nil {
				return nil, sessionError(rec, reply.Line, "data.step", "missing or not a number in the model reply a user's message was steered in after (line %d)", e.Line)
			}
			var id struct{ ID string }
			json.Unmarshal(e.Data, &id)
			out[e.Line] = SteerPoint{Turn: turn, Step: *d.Step, Line: e.Line, Direct: spliced && !queued[id.ID]}
		}
	}
	return out, nil
}

// queuedRows reports whether the log has inbox splices (spliced) and the
// ids of the messages a splice inserted into next-turn: a queued row.
func queuedRows(evs []Event) (spliced bool, queued map[string]bool) {
	queued = map[string]bool{}
	for _, e := range evs {
		if e.Type != session.KindInboxSpliced {
			continue
		}
		spliced = true
		var d struct {
			Target   string
			Inserted []struct{ ID string }
		}
		if json.Unmarshal(e.Data, &d) != nil || d.Target != "next-turn" {
			continue
		}
		for _, m := range d.Inserted {
			queued[m.ID] = true
		}
	}
	return spliced, queued
}

// noStop refuses a turn the user stopped (the web app's Stop generating:
// turn/end aborted with reason kind user). The replay's web client does
// not press Stop, and a turn's end is outside the tool boundary: the turn
// would run on to its scripted end unseen.
func noStop(rec string, evs []Event) error {
	for _, e := range evs {
		if e.Type != session.KindTurnEnd {
			continue
		}
		var d struct {
			Turn   int
			Reason struct {
				Kind   string
				Reason struct{ Kind string }
			}
		}
		if json.Unmarshal(e.Data, &d) == nil && d.Reason.Kind == "aborted" && d.Reason.Reason.Kind == "user" {
			return sessionError(rec, e.Line, "data.reason", "turn %d ended aborted by the user (the web app's Stop generating), which the replay's web client does not press", d.Turn)
		}
	}
	return nil
}

// userSourced reports whether e (a user/message) has a user source.
func userSourced(e Event) bool {
	var d userMessageData
	return json.Unmarshal(e.Data, &d) == nil && d.Source != nil && d.Source.Kind == "user"
}

// WebSteps are what the user typed into a web session, in the log's
// order: each slash command the replay drives (a command/run with a user
// source: [WebCommands]), each prompt ([WebPrompts]) and each message
// steered into a running turn ([SteerOp], placed by steerPoints). A /plan with a
// message sends it as the turn's message, so that message (the next
// user's message of the log, which must hold the command's text) is the
// /plan step's, not a prompt of its own. Another command is refused.
func WebSteps(rec string, evs []Event) ([]Step, error) {
	prompts, err := WebPrompts(rec, evs)
	if err != nil {
		return nil, err
	}
	points, err := steerPoints(rec, evs)
	if err != nil {
		return nil, err
	}
	var steps []Step
	var planned *Step // a /plan whose message is the next user's message
	for _, e := range evs {
		switch e.Type {
		case session.KindUserMessage:
			if !userSourced(e) {
				continue
			}
			text := prompts[0]
			prompts = prompts[1:]
			if planned != nil {
				if want := strings.TrimSpace(planned.Text); text != want {
					return nil, sessionError(rec, e.Line, "data.content", "the message of the /plan command before it: want %q, got %q", want, text)
				}
				planned = nil
				continue
			}
			if at, ok := points[e.Line]; ok {
				steps = append(steps, Step{Op: SteerOp, Text: text, At: &at})
				continue
			}
			steps = append(steps, Step{Op: "prompt", Text: text})
		case session.KindCommandRun:
			step, err := webCommand(rec, e)
			if err != nil {
				return nil, err
			}
			if planned != nil {
				return nil, sessionError(rec, e.Line, "type", "a command/run before the message of the /plan command before it")
			}
			steps = append(steps, step)
			if arg := strings.TrimSpace(step.Text); step.Op == PlanOp && arg != "" && arg != "off" {
				planned = &steps[len(steps)-1]
			}
		}
	}
	if planned != nil {
		return nil, sessionError(rec, 0, "", "no user/message for the /plan command's message %q", strings.TrimSpace(planned.Text))
	}
	return steps, nil
}

// webCommand is the step of one command/run: a command of [WebCommands],
// its arguments checked where the command takes a fixed set.
func webCommand(rec string, e Event) (Step, error) {
	var d struct {
		Name *string `json:"name"`
		Args string  `json:"args"`
	}
	if err := json.Unmarshal(e.Data, &d); err != nil {
		return Step{}, jsonError(rec, SessionFile, e.Data, e.Line, err)
	}
	switch {
	case d.Name == nil:
		return Step{}, sessionError(rec, e.Line, "data.name", "missing (required in command/run)")
	case !slices.Contains(WebCommands, *d.Name):
		return Step{}, sessionError(rec, e.Line, "data.name", "command /%s: the replay drives the web app's /%s commands only", *d.Name, strings.Join(WebCommands, ", /"))
	case *d.Name != PermissionOp:
		return Step{Op: *d.Name, Text: d.Args}, nil
	}
	preset := strings.TrimSpace(d.Args)
	if !slices.Contains(sandboxModes, preset) {
		return Step{}, sessionError(rec, e.Line, "data.args", "/permission %q: want one of %s", preset, strings.Join(sandboxModes, ", "))
	}
	return Step{Op: PermissionOp, Text: preset}, nil
}

// SwitchesFirst reports whether a web session's first step is a
// /permission switch: its composition started under upstream's default
// profile (danger-full-access, approval never), which the switch left.
func (r *Recording) SwitchesFirst() bool {
	return r.Frontend == Web && len(r.Input.Steps) > 0 && r.Input.Steps[0].Op == PermissionOp
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
		out = append(out, d.text())
	}
	return out, nil
}

// text is the message's text blocks joined.
func (d userMessageData) text() string {
	var b strings.Builder
	if d.Content != nil {
		for _, bl := range *d.Content {
			if bl.Type == "text" {
				b.WriteString(bl.Text)
			}
		}
	}
	return b.String()
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
// by a runtime context's sections. A log in the earlier message shape
// ([Recording.EarlierShape]) with no policy event and no runtime context
// was written before the web app logged either:
// it runs under the web composition's default (WebDefaultMode,
// WebDefaultApproval), Policy.Default set.
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
	if dm := r.Settings.DeploymentMode; len(evs) == 0 && dm != "" {
		// an earlier web app wrote no policy events: the deployment's
		// sandbox-policy mode, and the approval policy it derives
		p.Mode, p.Approval = dm, "ask"
		if dm == "danger-full-access" {
			p.Approval = "never"
		}
		return p, nil
	}
	if line := r.EarlierShape(); line > 0 && len(evs) == 0 && !r.HasRuntimeContext() {
		// written before the web app logged its policy: a fresh session
		// of the composition upstream's suite replays it through today
		return Policy{Mode: WebDefaultMode, Approval: WebDefaultApproval, Line: line, Default: true}, nil
	}
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

// The policy upstream's web composition pins a fresh session to (its
// dsh-base bundle: sandbox-policy mode workspace-write, approval ask, the
// permission service's workspace-write preset), with no
// DSH_PERMISSION_MODE set.
const (
	WebDefaultMode     = "workspace-write"
	WebDefaultApproval = "ask"
)

// EarlierShape is the line of the log's first assistant/message or
// tool/result stored in the earlier message shape, without its message
// wrapper (0: none): a log the web app wrote before its messages had
// identities, and before it logged its policy. (A user/message without
// an id and a role is upgraded too, but both shapes hold its content and
// source: it does not date the log.)
func (r *Recording) EarlierShape() int {
	for _, e := range r.Events {
		if e.Earlier && e.Type != session.KindUserMessage {
			return e.Line
		}
	}
	return 0
}

// notWeb refuses a web setting in a recording of another front end.
func (l *loader) notWeb(r *Recording) error {
	if r.Settings.UIAnswer != "" {
		return l.fail(SettingsFile, 0, "uiAnswer", "set, but this is a %s recording: the web UI answers a web session's approvals", r.Frontend)
	}
	if r.Settings.UIQuestions != nil {
		return l.fail(SettingsFile, 0, "uiQuestions", "set, but this is a %s recording: the web UI answers a web session's questions", r.Frontend)
	}
	return nil
}

// UserPlace is where a user's message entered a session's conversation:
// after Replies model replies (the log's assistant/message events).
type UserPlace struct {
	// Text is the message's text blocks joined.
	Text string
	// Replies is the number of model replies before it.
	Replies int
	// Line locates it in its log (0: none).
	Line int
}

// UserPlaces are the places of the log's user messages with a user
// source, in order: where each prompt and each steered message entered
// the conversation the model was given.
func UserPlaces(evs []Event) []UserPlace {
	var out []UserPlace
	replies := 0
	for _, e := range evs {
		switch e.Type {
		case session.KindAssistantMessage:
			replies++
		case session.KindUserMessage:
			var d userMessageData
			if json.Unmarshal(e.Data, &d) != nil || d.Source == nil || d.Source.Kind != "user" {
				continue
			}
			out = append(out, UserPlace{Text: d.text(), Replies: replies, Line: e.Line})
		}
	}
	return out
}
