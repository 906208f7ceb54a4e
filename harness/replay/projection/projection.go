package projection

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/dshsim/dshsim/harness/replay/recording"
	"github.com/dshsim/dshsim/pipeline/session"
	"github.com/dshsim/dshsim/sandbox/outfile"
)

// Item kinds.
const (
	KindContext  = "runtime-context"
	KindNotice   = "job-notice"
	KindCall     = session.KindToolCall
	KindAsked    = session.KindApprovalAsked
	KindDecided  = session.KindApprovalDecided
	KindResult   = session.KindToolResult
	KindTurnEnd  = session.KindTurnEnd
	KindInvoked  = session.KindHookInvoked
	KindHook     = session.KindHookResult
	kindTurnOpen = session.KindTurnStart
	// KindDispatchStart and KindDispatch are run_code's nested calls.
	KindDispatchStart = session.KindCodeDispatchStart
	KindDispatch      = session.KindCodeDispatch
	// KindDescriptor is a child's subagent/descriptor; KindSandboxMode and
	// KindApprovalPolicy the policy events (a child's inherited ones).
	KindDescriptor     = session.KindSubagentDescriptor
	KindSandboxMode    = session.KindSandboxMode
	KindApprovalPolicy = session.KindApprovalPolicy
	// KindRelay is a message between agents: a coordinator's send_message,
	// a child's report, a settlement notice.
	KindRelay = "subagent-message"
	// The workflow tool's run, in the parent's log.
	KindRunStart   = session.KindWorkflowRunStart
	KindAgentStart = session.KindWorkflowAgentStart
	KindAgentEnd   = session.KindWorkflowAgentEnd
	KindRunEnd     = session.KindWorkflowRunEnd
	// Turn-level events: the session's titles and the title model's
	// request, a model call's retry, the workspace instructions a step
	// entered, and a pending message a plugin removed from the inbox.
	KindTitle        = session.KindTitle
	KindTitleRequest = session.KindTitleRequest
	KindRetry        = session.KindRetry
	KindRetryStarted = session.KindRetryStarted
	KindInstructions = "workspace-instructions"
	KindCanceled     = "inbox/canceled"
	// KindTodo is todo_write's todo/write event.
	KindTodo = session.KindTodoWrite
	// KindGoal is a change of the session's durable goal; KindRound a goal
	// round's prompt (a user/message of source kind goal).
	KindGoal  = session.KindGoalChange
	KindRound = "goal-round"
	// A compaction: its start, its summary record and its end (the
	// checkpoint between them is a KindContext of plugin compact).
	KindCompactionStart   = session.KindCompactionStart
	KindCompactionSummary = session.KindCompactionSummary
	KindCompactionEnd     = session.KindCompactionEnd
	KindCompactionPrune   = session.KindCompactionPrune
	// KindPlan is a switch of the session's plan mode.
	KindPlan = session.KindPlanMode
	// KindCatalog is the skill catalog message.
	KindCatalog = "skill-catalog"
	// KindPrompt is a user's prompt: its text blocks and, when it carries
	// images, their attachment references.
	KindPrompt = "prompt"
	// KindSplice is a change of an agent's inbox: a message queued for the
	// next turn or step, or the claim that takes it.
	KindSplice = "inbox/spliced"
)

// Item is one projected event.
type Item struct {
	// Turn is the turn the event belongs to (0 before the first turn/start).
	Turn int `json:"turn"`
	// Kind is one of the Kind constants.
	Kind string `json:"kind"`
	// Seq is the event's seq in its log (shown, never compared).
	Seq int64 `json:"seq"`
	// Fields are the compared fields, normalised.
	Fields map[string]any `json:"fields"`
}

// Label renders "tool/call bash call_00_x" style one-line labels.
func (it Item) Label() string {
	s := func(k string) string { v, _ := it.Fields[k].(string); return v }
	switch it.Kind {
	case KindCall:
		return fmt.Sprintf("tool/call %s %s", s("name"), s("callId"))
	case KindAsked:
		return fmt.Sprintf("approval/asked %s %s", s("toolName"), s("callId"))
	case KindDecided:
		return "approval/decided " + s("outcome")
	case KindResult:
		e, _ := it.Fields["isError"].(bool)
		verdict := "ok"
		if e {
			verdict = "ERR"
		}
		return fmt.Sprintf("tool/result %s %s", s("callId"), verdict)
	case KindContext:
		if p := s("plugin"); p != "" {
			return "context message from " + p
		}
	case KindRelay:
		return "subagent message (" + s("kind") + ")"
	case KindDescriptor:
		return fmt.Sprintf("subagent/descriptor %s %s", s("mode"), s("provider"))
	case KindAgentStart:
		return "tool-workflow/agent-start " + s("label")
	case KindInvoked:
		return "hook/invoked " + s("handlerId")
	case KindHook:
		return fmt.Sprintf("hook/result %s %s", s("handlerId"), s("decision"))
	case KindDispatchStart:
		return fmt.Sprintf("tool/code-dispatch-start %s %s", s("name"), s("subCallId"))
	case KindDispatch:
		verdict := "ok"
		if e, _ := it.Fields["isError"].(bool); e {
			verdict = "ERR"
		}
		return fmt.Sprintf("tool/code-dispatch %s %s", s("subCallId"), verdict)
	case KindCatalog:
		return "skill catalog message"
	case KindPrompt:
		return "the user's prompt"
	case KindRound:
		src, _ := it.Fields["source"].(map[string]any)
		n, _ := src["round"].(float64)
		return fmt.Sprintf("goal round %d", int(n))
	case KindSplice:
		return "inbox/spliced " + s("target")
	case KindTurnEnd:
		r, _ := it.Fields["reason"].(map[string]any)
		k, _ := r["kind"].(string)
		return "turn/end " + k
	case KindTitle:
		return fmt.Sprintf("session/title %q", s("title"))
	case KindRetry, KindRetryStarted:
		n, _ := it.Fields["retry"].(float64)
		return fmt.Sprintf("%s %d", it.Kind, int(n))
	case KindCanceled:
		return "inbox/canceled " + s("target")
	}
	return it.Kind
}

// noticePlugin is the source plugin of a job's completion notice.
const noticePlugin = "tool-jobs"

// Normalizer normalises string values of a projection.
type Normalizer struct {
	// Cwds are the spellings of the session cwd (path, realpath aliases).
	Cwds []string
	// SessionIDs are run-specific ids replaced before the UUID rule.
	SessionIDs []string
	// EventTimes turns every ISO time as JavaScript's toISOString prints
	// it (YYYY-MM-DDTHH:MM:SS.mmmZ) into {{eventTime}}: for recordings whose
	// tool text shows event times (ours; upstream's normaliser keeps them).
	EventTimes bool
}

var (
	uuidRE     = regexp.MustCompile(`[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}`)
	spillTmpRE = regexp.MustCompile(`/tmp/dsh-acp-snap-[0-9a-f]{9}/session-[0-9a-f]{12}/[0-9a-f]{12}-([A-Za-z0-9_-]+(?:\.[A-Za-z0-9]+)?)`)
	spillCwdRE = regexp.MustCompile(`\{\{cwd\}\}/\.spill/session-[0-9a-f]{12}/[0-9a-f]{12}-([A-Za-z0-9_-]+(?:\.[A-Za-z0-9]+)?)`)
	spillRepl  = "{{spillLocator:$1}}"
	// A bash stream's full-output file (dsh-subprocess-local's spawn, and
	// ours in the same shape: outfile.Pattern): mkdtemp's 6 characters, pid,
	// per-process counter and 6 random bytes vary per run, upstream's own
	// self-replay included; the label stays.
	subprocessRepl = "{{subprocessOutput:$1}}"
	// A session_event_read target: from its header to the closing fence or
	// the spill notice.
	eventReadRE     = regexp.MustCompile("(?s)Session [^\\n]* — [^\\n]*\\nTarget event seq \\d+:\\n```json\\n\\{.*?(?:\\n```|\\n\\n\\(Omitted |$)")
	eventTimeRE     = regexp.MustCompile(`(?m)^  "time": \d+,$`)
	omittedBytesRE  = regexp.MustCompile(`\n\n\(Omitted \d+ bytes\.`)
	eventTimeRepl   = `  "time": {{eventTime}},`
	omittedByteRepl = "\n\n(Omitted {{eventOmittedBytes}} bytes."
	placeholder     = "{{sessionId}}"
	isoTimeRE       = regexp.MustCompile(`[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z`)
	isoTimeRepl     = "{{eventTime}}"
)

// WithCwd returns a normalizer for a session whose cwd is dir: dir and its
// symlink-resolved spelling both become {{cwd}}.
func WithCwd(dir string, ids ...string) Normalizer {
	n := Normalizer{SessionIDs: ids}
	if dir != "" && dir != "{{cwd}}" {
		n.Cwds = append(n.Cwds, dir)
		if real, err := filepath.EvalSymlinks(dir); err == nil && real != dir {
			n.Cwds = append(n.Cwds, real)
		}
	}
	return n
}

// String normalises one string.
func (n Normalizer) String(s string) string {
	cwds := append([]string(nil), n.Cwds...)
	sort.SliceStable(cwds, func(i, j int) bool { return len(cwds[i]) > len(cwds[j]) })
	for _, c := range cwds {
		s = replaceAtBoundary(s, c, "{{cwd}}")
	}
	if eventReadRE.MatchString(s) {
		s = eventReadRE.ReplaceAllStringFunc(s, func(region string) string {
			return eventTimeRE.ReplaceAllLiteralString(region, eventTimeRepl)
		})
		s = omittedBytesRE.ReplaceAllLiteralString(s, omittedByteRepl)
	}
	if n.EventTimes {
		s = isoTimeRE.ReplaceAllLiteralString(s, isoTimeRepl)
	}
	s = spillTmpRE.ReplaceAllString(s, spillRepl)
	s = spillCwdRE.ReplaceAllString(s, spillRepl)
	s = outfile.Pattern.ReplaceAllString(s, subprocessRepl)
	for _, id := range n.SessionIDs {
		if id != "" {
			s = strings.ReplaceAll(s, id, placeholder)
		}
	}
	return uuidRE.ReplaceAllString(s, placeholder)
}

// replaceAtBoundary replaces old by repl where old is not followed by a path
// character that would make it a longer name (e.g. /tmp/ws vs /tmp/ws2).
func replaceAtBoundary(s, old, repl string) string {
	return ReplaceWhere(s, old, repl, func(rest string, _, end int) bool {
		return end == len(rest) || !isNameChar(rest[end])
	})
}

// ReplaceWhere replaces the occurrences of old (not empty) in s, from the
// left and not overlapping, by repl where at says so; the others stay. at
// gets the rest of s from just after the previous occurrence, and this
// occurrence's bounds in it, rest[i:end].
func ReplaceWhere(s, old, repl string, at func(rest string, i, end int) bool) string {
	var b strings.Builder
	for {
		i := strings.Index(s, old)
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		end := i + len(old)
		b.WriteString(s[:i])
		if at(s, i, end) {
			b.WriteString(repl)
		} else {
			b.WriteString(old)
		}
		s = s[end:]
	}
}

func isNameChar(c byte) bool {
	return c == '_' || c == '-' || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
}

// Value normalises every string inside a parsed JSON value.
func (n Normalizer) Value(v any) any {
	switch t := v.(type) {
	case string:
		return n.String(t)
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = n.Value(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, e := range t {
			out[k] = n.Value(e)
		}
		return out
	}
	return v
}

// systemPromptPlugin is the source of the runtime-context message.
const systemPromptPlugin = "@deepseek-ai/dsh-system-prompt"

// Project extracts the normalised projection of a log's events.
func Project(events []recording.Event, n Normalizer) ([]Item, error) {
	items, _, err := ProjectCovered(events, n)
	return items, err
}

// ProjectCovered is [Project], also counting the events compared and the
// ones left out with their reasons. An event the projection neither
// compares nor knows to leave out is an error naming its seq and type.
func ProjectCovered(events []recording.Event, n Normalizer) ([]Item, Coverage, error) {
	var items []Item
	var cov Coverage
	turn := 0
	for _, e := range events {
		d, err := decode(e.Data)
		if err != nil {
			return nil, cov, fmt.Errorf("seq %d (%s): data: %w", e.Seq, e.Type, err)
		}
		if e.Type == kindTurnOpen {
			if t, ok := d["turn"].(float64); ok {
				turn = int(t)
			}
		}
		kind, fields := project(e.Type, d)
		if fields == nil {
			what, why, err := uncompared(e.Type, d)
			if err != nil {
				return nil, cov, fmt.Errorf("seq %d: %w", e.Seq, err)
			}
			cov.left(what, why)
			continue
		}
		cov.compared(e.Type)
		if op := replaceOp(e.SurfaceOp); op != nil {
			fields["surfaceOp"] = op // a message that replaces earlier ones (a compaction)
		}
		items = append(items, Item{Turn: turn, Kind: kind, Seq: e.Seq, Fields: n.Value(fields).(map[string]any)})
	}
	return items, cov, nil
}

// replaceOp is a surfaceOp that replaces earlier events (nil for none or
// an append).
func replaceOp(raw json.RawMessage) map[string]any {
	var op map[string]any
	if len(raw) == 0 || json.Unmarshal(raw, &op) != nil || op["op"] != "replace" {
		return nil
	}
	return op
}

// picked are the event types projected as some of their data's fields, as
// they are.
var picked = map[string][]string{
	KindAsked:         {"toolName", "callId", "reason"},
	KindDecided:       {"outcome"},
	KindInvoked:       {"point", "dialect", "handlerId", "matcher"},
	KindTurnEnd:       {"reason"},
	KindDispatchStart: {"rootCallId", "parentCallId", "subCallId", "name", "arguments"},
	KindTitle:         {"title", "messageSeqs", "source"},
	// the provider is the replay's own model, not the recording's
	KindRetry:        {"retryId", "step", "mode", "policyKey", "retry", "maxRetries", "delayMs", "failure"},
	KindRetryStarted: {"retryId", "step", "retry"},
	KindTodo:         {"todos"},
	// the times are the run's clock (upstream's normaliser zeroes them)
	KindGoal:           {"kind", "version", "operation", "goal", "roundsStarted", "cleared"},
	KindDescriptor:     {"version", "mode", "provider", "label", "agentProvider", "agentModel", "persona", "toolFilter"},
	KindSandboxMode:    {"mode", "source"},
	KindApprovalPolicy: {"policy", "source"},
	KindPlan:           {"active"},
	KindRunStart:       {"runId", "name"},
	KindAgentStart:     {"runId", "seq", "label", "phase", "childId"},
	KindAgentEnd:       {"runId", "seq", "outcome"},
	KindRunEnd:         {"runId", "stopReason"},
	// a compaction around its checkpoint (the summary's provider and model
	// are the replay's own model, as a request's are)
	KindCompactionStart:   {"compactionId", "sourceCommandId", "turn"},
	KindCompactionSummary: {"compactionId", "sourceCommandId", "summary", "rawOutput", "llmStreamCall", "shadowedRange", "shadowedSeqs", "shadowedTokenCount", "maxTokens", "usage"},
	KindCompactionEnd:     {"compactionId", "sourceCommandId", "turn", "error"},
	KindCompactionPrune:   {"shadowedRange", "shadowedSeqs", "shadowedTokenCount"},
}

// project is the item kind and fields an event of type typ with data d
// projects to (nil fields: the event is not part of the projection).
func project(typ string, d map[string]any) (kind string, fields map[string]any) {
	if keys, ok := picked[typ]; ok {
		return typ, pick(d, keys...)
	}
	switch typ {
	case session.KindUserMessage:
		return pluginMessage(d)
	case KindTitleRequest:
		f := pick(d, "titleProvider", "messageSeqs", "route", "system", "maxTokens")
		var msgs []any
		list, _ := d["messages"].([]any)
		for _, m := range list {
			mm, _ := m.(map[string]any)
			msgs = append(msgs, map[string]any{"text": contentText(mm["content"]), "source": mm["source"]})
		}
		f["messages"] = msgs
		return KindTitleRequest, f
	case session.KindInboxSpliced:
		if d["outcome"] != "canceled" {
			if d["target"] != "next-turn" {
				return "", nil
			}
			return KindSplice, spliceFields(d)
		}
		return KindCanceled, pick(d, "target", "start", "removedCount")
	case KindCall:
		f := pick(d, "name", "callId")
		raw, _ := d["arguments"].(string)
		var args any
		if err := json.Unmarshal([]byte(raw), &args); err != nil {
			args = raw // unparsable arguments compare as the raw string
		}
		f["arguments"] = args
		return KindCall, f
	case KindResult:
		return KindResult, toolResult(d)
	case KindHook:
		f := pick(d, "point", "handlerId", "decision", "exitCode", "stderrSummary", "durationMs")
		if _, ok := f["durationMs"]; ok {
			f["durationMs"] = 0.0 // run noise, as upstream's comparison sets it
		}
		return KindHook, f
	case KindDispatch:
		f := pick(d, "rootCallId", "parentCallId", "subCallId", "name", "arguments", "isError")
		f["text"] = contentText(d["content"])
		return KindDispatch, f
	}
	return "", nil
}

// pluginMessage projects a plugin's user message: a job notice, or a
// context message (the runtime context, or a hook's, named by its plugin).
// Other messages are not projected.
func pluginMessage(d map[string]any) (kind string, fields map[string]any) {
	src, _ := d["source"].(map[string]any)
	switch k, _ := src["kind"].(string); k {
	case "coordinator", "subagent-report", "subagent-settled":
		return KindRelay, relayFields(d, src)
	case "agent-instructions":
		return KindInstructions, map[string]any{"texts": contentTexts(d["content"]), "source": src}
	case "skill-catalog":
		return KindCatalog, map[string]any{"text": contentText(d["content"]), "entries": src["entries"], "update": src["update"] == true}
	case "goal":
		return KindRound, map[string]any{"texts": contentTexts(d["content"]), "source": pick(src, "goalId", "revision", "round")}
	case "user":
		f := map[string]any{"texts": contentTexts(d["content"])}
		if images := attachments(d["content"]); images != nil {
			f["attachments"] = images
		}
		return KindPrompt, f
	case "plugin":
	default:
		return "", nil
	}
	plugin, _ := src["plugin"].(string)
	if plugin == noticePlugin {
		return KindNotice, map[string]any{"text": contentText(d["content"]), "summary": src["summary"]}
	}
	f := map[string]any{"text": contentText(d["content"])}
	if plugin != systemPromptPlugin {
		// another plugin's message: a hook's context, a reminder (its
		// form and summary), a compaction (its id); the runtime context
		// stays as it was
		f["plugin"] = plugin
		for _, k := range []string{"form", "summary", "compactionId"} {
			if v, ok := src[k]; ok {
				f[k] = v
			}
		}
	}
	return KindContext, f
}

// spliceFields are an inbox change's: its target, start and removed count,
// and each inserted message's source kind, plugin and text blocks.
func spliceFields(d map[string]any) map[string]any {
	f := pick(d, "target", "start", "removedCount")
	var ins []any
	list, _ := d["inserted"].([]any)
	for _, m := range list {
		mm, _ := m.(map[string]any)
		src, _ := mm["source"].(map[string]any)
		ins = append(ins, map[string]any{"source": pick(src, "kind", "plugin"), "texts": contentTexts(mm["content"])})
	}
	f["inserted"] = append([]any{}, ins...)
	return f
}

// relayFields are a relayed message's: its source (kind, form, summary,
// sender) and its text blocks, each on its own.
func relayFields(d, src map[string]any) map[string]any {
	f := pick(src, "kind", "form", "summary", "senderSessionId")
	f["texts"] = contentTexts(d["content"])
	return f
}

// contentTexts are the texts of a message's text blocks, one per block
// (empty, not nil, when it has none).
func contentTexts(v any) []any {
	return append([]any{}, blockValues(v, "text", "text")...)
}

// toolResult projects a tool result: its meta and error, its call, the text
// of its tool-result blocks and whether any is an error.
func toolResult(d map[string]any) map[string]any {
	f := pick(d, "meta", "error")
	msg, _ := d["message"].(map[string]any)
	src, _ := msg["source"].(map[string]any)
	f["callId"] = src["callId"]
	var text strings.Builder
	isErr := false
	var images []any
	content, _ := msg["content"].([]any)
	for _, c := range content {
		cm, _ := c.(map[string]any)
		if t, _ := cm["type"].(string); t != "tool-result" {
			continue
		}
		text.WriteString(contentText(cm["content"]))
		if b, _ := cm["isError"].(bool); b {
			isErr = true
		}
		images = append(images, attachments(cm["content"])...)
	}
	f["text"], f["isError"] = text.String(), isErr
	if images != nil {
		f["attachments"] = images // an image block's reference (read_image)
	}
	return f
}

// attachments are the attachment references of a content's image blocks
// (nil when it has none).
func attachments(v any) []any { return blockValues(v, "image", "attachment") }

// contentText is the text of a content's text blocks, joined.
func contentText(v any) string {
	var b strings.Builder
	for _, t := range blockValues(v, "text", "text") {
		s, _ := t.(string)
		b.WriteString(s)
	}
	return b.String()
}

// blockValues are the values of key in a content's blocks of type typ, in
// order (nil when it has none).
func blockValues(v any, typ, key string) []any {
	var out []any
	blocks, _ := v.([]any)
	for _, c := range blocks {
		cm, _ := c.(map[string]any)
		if t, _ := cm["type"].(string); t == typ {
			out = append(out, cm[key])
		}
	}
	return out
}

func pick(d map[string]any, keys ...string) map[string]any {
	out := map[string]any{}
	for _, k := range keys {
		if v, ok := d[k]; ok {
			out[k] = v
		}
	}
	return out
}
