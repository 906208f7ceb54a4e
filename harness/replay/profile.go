package replay

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"github.com/dshsim/dshsim/harness/replay/recording"
	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/pipeline/session"
	"github.com/dshsim/dshsim/stack"
	"github.com/dshsim/dshsim/tools/cordis"
	"github.com/dshsim/dshsim/tools/goal"
	"github.com/dshsim/dshsim/tools/lsp"
	"github.com/dshsim/dshsim/tools/planmode"
	"github.com/dshsim/dshsim/tools/ralph"
	"github.com/dshsim/dshsim/tools/served"
)

// imageModels are the models of upstream's image overlays' replay catalog
// that declare image input (deepseek-v4-flash and -pro declare text only).
var imageModels = []string{"deepseek-v4-flash-vision-exp"}

// standalone reports whether profile is one of upstream's standalone
// overlays: no sandbox-policy, approval or runtime-context plugins.
func standalone(profile string) bool {
	switch profile {
	case recording.ProfileFSSearch, recording.ProfilePwsh, recording.ProfilePersistentPwsh, recording.ProfileMinimal:
		return true
	}
	return false
}

// standaloneNote says what a standalone profile composes around its tools.
func standaloneNote(profile string) string {
	if profile == recording.ProfileMinimal {
		return "profile minimal: its overlay's sandbox-policy is danger-full-access and it mounts no approval or runtime-context plugin: the persistent bash and str_replace_editor run unconfined (composed as stack.Without.Policy, the same boundary), nothing asks, and no runtime context is logged"
	}
	return fmt.Sprintf("profile %s is a standalone overlay without sandbox-policy and approval plugins: tools run unconfined (danger-full-access) and no runtime context is logged", profile)
}

// minimalBashDescription is the persistent bash's description in the
// minimal overlay (examples/jsonrpc-agent/minimal.cordis.yml), which the
// suite pins (sdk.snapshot.ts MINIMAL_BASH_DESCRIPTION).
const minimalBashDescription = "Run commands in a bash shell\n* When invoking this tool, the contents of the \"command\" parameter does NOT need to be XML-escaped.\n* You don't have access to the internet via this tool.\n* You do have access to a mirror of common linux and python packages via apt and pip.\n* State is persistent across command calls and discussions with the user.\n* To inspect a particular line range of a file, e.g. lines 10-25, try 'sed -n 10,25p /path/to/the/file'.\n* Please avoid commands that may produce a very large amount of output.\n* Please run long lived commands in the background, e.g. 'sleep 10 &' or start a server in the background."

// toolAreas maps a tool the recording may call to the profile area that
// composes it.
var toolAreas = map[string]string{
	"todo_write": "todo", "skill": "skills", "read_image": "images", "glob": "search", "grep": "search",
	"terminal_open": "terminal", "terminal_send": "terminal", "terminal_read": "terminal", "terminal_signal": "terminal",
	"terminal_close": "terminal", "terminal_list": "terminal", "lsp": "lsp", "pwsh": "pwsh", "web_fetch": "web",
	cordis.InspectListName: "cordis", cordis.InspectQueryName: "cordis", cordis.InspectSelfName: "cordis", cordis.DefineName: "cordis",
	cordis.RunName: "cordis", cordis.StopName: "cordis", cordis.UndefineName: "cordis",
	goal.GetName: "goal", goal.CreateName: "goal", goal.UpdateName: "goal", ralph.Name: "ralph",
}

// profileConfig sets on cfg what the recording's overlay composes beyond
// the safety stack (its profile, see recording.Profiles), plus the area of
// any such tool the model calls that the profile lacks (upstream's suite
// rejects an unknown tool, so the overlay had it; a note says so), and
// the recording as the source of served bodies.
func (p *prepared) profileConfig(cfg *stack.Config, ws string) (notes []string) {
	rec, set := p.rec, p.rec.Settings
	home, agents := filepath.Join(ws, ".dsh"), filepath.Join(ws, ".agents") // DSH_HOME, DSH_AGENTS_HOME of a snapshot run
	areas := map[string]bool{}
	switch set.Profile {
	case recording.ProfileFSSearch:
		cfg.FileSearch = snapshotFileSearch("")
		cfg.Without = stack.Without{FileTools: true, JobTools: true, Policy: true}
	case recording.ProfilePwsh:
		cfg.Pwsh, cfg.Jobs.TaskWording = &stack.PwshConfig{}, true
		cfg.Without = stack.Without{Bash: true, FileTools: true, Policy: true}
	case recording.ProfilePersistentPwsh:
		cfg.Pwsh = &stack.PwshConfig{Persistent: true}
		cfg.Without = stack.Without{Bash: true, JobTools: true, FileTools: true, Policy: true}
	case recording.ProfileMinimal:
		// persistent-bash timeoutMs 300000, str-replace-editor maxOutputChars 16000
		cfg.PersistentShell = &stack.PersistentShellConfig{TimeoutMs: 300000, Description: minimalBashDescription}
		cfg.Editor = &stack.EditorConfig{MaxOutputChars: 16000, Unobserved: true} // the overlay's bare fs-local: no fs-observation-policy
		cfg.Without = stack.Without{Bash: true, JobTools: true, FileTools: true, Policy: true}
	case recording.ProfileSingleExe:
		cfg.Cordis = true
		cfg.Without.Bash, cfg.Without.FileTools = true, true
	default:
		cfg.Todo, cfg.Skills = true, &stack.SkillsConfig{DshHome: home, AgentsHome: agents}
		areas["todo"], areas["skills"] = true, true
	}
	switch set.Profile {
	case recording.ProfileImage:
		areas["images"] = true
	case recording.ProfileLSP:
		areas["lsp"] = true
	case recording.ProfilePTY:
		cfg.Terminal = &stack.TerminalConfig{MaxResultBytes: 64}
	case recording.ProfileAdvanced:
		cfg.Cordis = true
	case recording.ProfileWeb:
		cfg.WebFetch = true
	case recording.ProfileGoal:
		areas["goal"], areas["ralph"] = true, true
	}
	if rec.Frontend == recording.Web {
		areas["goal"] = true // the web app's standard preset mounts tool-goal (its host plane the goal domain, /goal and the round driver)
		cfg.PlanMode = &planmode.Config{Plan: &planmode.Service{}, Ask: webUIAnswers}
	}
	for _, r := range p.modelReplies() {
		for _, c := range r.ToolCalls {
			area := toolAreas[c.Name]
			if area == "" || areas[area] || composes(cfg, area) {
				continue
			}
			areas[area] = true
			notes = append(notes, fmt.Sprintf("the recording calls %s, which its profile %q does not compose: its area (%s) is composed as the overlay must have", c.Name, profileName(set.Profile), area))
			enable(cfg, area, home, agents)
		}
	}
	for area := range areas {
		enable(cfg, area, home, agents)
	}
	if cfg.Images != nil {
		cfg.Images.Model = recordedInfo(rec).Model
	}
	cfg.TodoOneInProgress = set.TodoAllowParallelInProgress != nil && !*set.TodoAllowParallelInProgress
	cfg.Served = &stack.ServedConfig{Tools: set.ServedTools, Source: servedSource(rec)}
	if unguarded(rec) {
		cfg.Without.Policy = true
	}
	return notes
}

func profileName(p string) string {
	if p == "" {
		return recording.ProfileDefault
	}
	return p
}

// composes reports whether cfg already composes area.
func composes(cfg *stack.Config, area string) bool {
	switch area {
	case "todo":
		return cfg.Todo
	case "skills":
		return cfg.Skills != nil
	case "images":
		return cfg.Images != nil
	case "search":
		return cfg.FileSearch != nil
	case "terminal":
		return cfg.Terminal != nil
	case "lsp":
		return cfg.LSP != nil
	case "pwsh":
		return cfg.Pwsh != nil
	case "cordis":
		return cfg.Cordis
	case "web":
		return cfg.WebFetch
	case "goal":
		return cfg.Goals != nil
	case "ralph":
		return cfg.Ralph
	}
	return false
}

// enable composes area with its snapshot overlay's settings.
func enable(cfg *stack.Config, area, home, agents string) {
	if composes(cfg, area) {
		return
	}
	switch area {
	case "todo":
		cfg.Todo = true
	case "skills":
		cfg.Skills = &stack.SkillsConfig{DshHome: home, AgentsHome: agents}
	case "images":
		cfg.Images = &stack.ImagesConfig{DshHome: home, ImageModels: imageModels}
	case "search":
		// the fs-search overlay's settings, the one upstream overlay mounting tool-fs-search
		cfg.FileSearch = snapshotFileSearch("")
	case "terminal":
		cfg.Terminal = &stack.TerminalConfig{}
	case "lsp":
		// EX/tests/lsp.cordis.snapshot.yml: server fixture, node ./lsp-server.mjs for .ts, one location
		cfg.LSP = &stack.LSPConfig{Servers: []lsp.Server{{Name: "fixture", Command: []string{"node", "./lsp-server.mjs"}, Extensions: []string{".ts"}}}, MaxLocations: 1}
	case "pwsh":
		cfg.Pwsh = &stack.PwshConfig{}
	case "cordis":
		cfg.Cordis = true
	case "web":
		cfg.WebFetch = true
	case "goal":
		cfg.Goals = &goal.Service{}
	case "ralph":
		cfg.Ralph = true
	}
}

// servedSource answers a served call with the recording's result of the
// call with the same id: a model's call from its tool/call and tool/result,
// a run_code program's nested call from its tool/code-dispatch, with the
// value the program received where the recording pins it
// ([served.NestedValue] over the outer call's recorded result). Each
// session's log, the root's and every child's, is a table of its own, so a
// child's call is answered from its child's log; see [pickServed].
func servedSource(rec *recording.Recording) served.Source {
	logs := []servedLog{{rec.Header.ID, servedCalls(rec.Events)}}
	for _, c := range rec.Children {
		logs = append(logs, servedLog{c.Header.ID, servedCalls(c.Events)})
	}
	return func(call *pipeline.Call) (served.Recorded, error) {
		sid := ""
		if a := call.Agent(); a != nil && a.Session != nil {
			sid = a.Session.ID()
		}
		return pickServed(logs, sid, call)
	}
}

// servedLog is one session's recorded calls by id.
type servedLog struct {
	session string
	calls   map[string]served.Recorded
}

// pickServed chooses the record that answers call, made in session sid.
// Call ids are the model's, and sessions may repeat them. The call's own
// session answers first: the recorded session with its id (a child takes its
// recorded counterpart's id), else the root's. Else the one result in any
// log for that id, tool and arguments (a fork's copied prefix repeats its
// parent's results: equal ones count once); results that differ are not
// guessed between. When no record matches, the own session's record of the
// id, else any, is returned for the served body to name the difference.
func pickServed(logs []servedLog, sid string, call *pipeline.Call) (served.Recorded, error) {
	id, own := call.CallID(), 0
	for i, l := range logs {
		if i > 0 && l.session == sid {
			own = i
		}
	}
	r, ok := logs[own].calls[id]
	found := ok && r.Content != nil // fallback holds a record of the id
	if found && served.Matches(r, call) {
		return r, nil
	}
	fallback := r
	var matches []served.Recorded
	for _, l := range logs {
		c, ok := l.calls[id]
		switch {
		case !ok || c.Content == nil:
		case !served.Matches(c, call):
			if !found {
				fallback, found = c, true
			}
		case !slices.ContainsFunc(matches, func(m served.Recorded) bool { return reflect.DeepEqual(m, c) }):
			matches = append(matches, c)
		}
	}
	switch {
	case len(matches) == 1:
		return matches[0], nil
	case len(matches) > 1:
		return served.Recorded{}, fmt.Errorf("the recording's sessions hold %d different results for call %s, none in the calling session", len(matches), id)
	case found:
		return fallback, nil
	}
	return served.Recorded{}, served.NoResult(id)
}

// servedCalls are one log's calls by id, with their results.
func servedCalls(events []recording.Event) map[string]served.Recorded {
	calls := map[string]served.Recorded{}
	type nested struct{ id, parent string }
	var dispatched []nested
	for _, e := range events {
		switch e.Type {
		case session.KindToolCall:
			var d struct {
				CallID, Name, Arguments string
			}
			if json.Unmarshal(e.Data, &d) == nil {
				calls[d.CallID] = served.Recorded{Name: d.Name, Arguments: json.RawMessage(d.Arguments)}
			}
		case session.KindToolResult:
			recordResult(calls, e.Data)
		case session.KindCodeDispatch:
			var d struct {
				ParentCallID string           `json:"parentCallId"`
				SubCallID    string           `json:"subCallId"`
				Name         string           `json:"name"`
				Arguments    json.RawMessage  `json:"arguments"`
				IsError      bool             `json:"isError"`
				Content      []pipeline.Block `json:"content"`
			}
			if json.Unmarshal(e.Data, &d) == nil && d.Content != nil {
				calls[d.SubCallID] = served.Recorded{Name: d.Name, Arguments: d.Arguments, Content: d.Content, IsError: d.IsError}
				dispatched = append(dispatched, nested{d.SubCallID, d.ParentCallID})
			}
		}
	}
	for _, n := range dispatched {
		r := calls[n.id]
		if !r.IsError {
			r.Value, r.ValueNote = nestedValue(r, calls[n.parent])
			calls[n.id] = r
		}
	}
	return calls
}

// recordResult adds a tool/result's content, isError, meta and error to
// its call in calls.
func recordResult(calls map[string]served.Recorded, data json.RawMessage) {
	var d struct {
		Message struct {
			Source struct {
				CallID string `json:"callId"`
			} `json:"source"`
			Content []struct {
				Content []pipeline.Block `json:"content"`
				IsError bool             `json:"isError"`
			} `json:"content"`
		} `json:"message"`
		Meta  json.RawMessage     `json:"meta"`
		Error *pipeline.ErrorInfo `json:"error"`
	}
	if json.Unmarshal(data, &d) != nil {
		return
	}
	r, ok := calls[d.Message.Source.CallID]
	if !ok {
		return
	}
	for _, c := range d.Message.Content {
		r.Content = append(r.Content, c.Content...)
		r.IsError = r.IsError || c.IsError
	}
	r.Meta, r.Error = d.Meta, d.Error
	calls[d.Message.Source.CallID] = r
}

// nestedValue is the value nested call r's program received, found by the
// tool's own rendering (a cordis tool's; other tools declare none here) in
// its content and in the outer call's recorded result; else why not.
func nestedValue(r, outer served.Recorded) (json.RawMessage, string) {
	var render served.Render
	if slices.Contains(cordis.Names, r.Name) {
		render = func(v json.RawMessage) ([]pipeline.Block, error) { return cordis.Render(r.Name, v) }
	}
	var text strings.Builder
	for _, b := range outer.Content {
		if b.Type == "text" {
			text.WriteString(b.Text)
		}
	}
	v, err := served.NestedValue(render, r.Content, text.String())
	if err != nil {
		return nil, err.Error()
	}
	return v, ""
}

// modelReplies are the model's replies in every session of the recording:
// the root's, then each child's (a child may call a tool the root never
// does).
func (p *prepared) modelReplies() []recording.Reply {
	out := append([]recording.Reply(nil), p.script.Replies...)
	for _, c := range p.rec.Children {
		if c.Script != nil {
			out = append(out, c.Script.Replies...)
		}
	}
	return out
}
