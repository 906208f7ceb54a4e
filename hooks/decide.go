package hooks

import (
	"strings"
	"unicode/utf16"

	"github.com/dshsim/dshsim/internal/jsjson"
	"github.com/dshsim/dshsim/pipeline"
)

// Model-facing fallbacks when no hook gave a reason (VERBATIM).
const (
	FallbackPreReason  = "blocked by PreToolUse hook"
	FallbackPostReason = "blocked by PostToolUse hook"
)

// output is one decoded hook run.
type output struct {
	// decision is the per-hook decision: block, deny, ask, allow, approve or "".
	decision string
	// reason is the hook's reason (stderr on exit 2; reason or
	// permissionDecisionReason from JSON); "" when none.
	reason string
	// stopped and stopReason come from "continue": false.
	stopped    bool
	stopReason string
	// systemMessage, additionalContext: "" when absent.
	systemMessage     string
	additionalContext string
	// updatedInput reports a requested (never honoured) argument rewrite.
	updatedInput bool
}

// logged is the per-hook decision hook/result records: the decision, else
// "stop" for continue:false, else "pass".
func (o output) logged() string {
	switch {
	case o.decision != "":
		return o.decision
	case o.stopped:
		return "stop"
	}
	return "pass"
}

// rank orders decisions for the merge: deny (block, deny) > ask > allow
// (allow, approve) > none.
func rank(decision string) int {
	switch decision {
	case "block", "deny":
		return 3
	case "ask":
		return 2
	case "allow", "approve":
		return 1
	}
	return 0
}

// decode reads one settled run (hp/codec.ts): exit 2 blocks with stderr as
// the reason and stdout unread; exit 0 with a JSON object on stdout carries
// structured fields; anything else decides nothing.
func decode(point Point, exitCode *int, stdout, stderr string) output {
	stdout, stderr = jsjson.Trim(stdout), jsjson.Trim(stderr)
	var o output
	switch {
	case exitCode == nil:
		return o
	case *exitCode == 2:
		o.decision, o.reason = "block", stderr
		return o
	case *exitCode != 0 || !strings.HasPrefix(stdout, "{"):
		return o
	}
	v, err := jsjson.Parse([]byte(stdout))
	if err != nil || v.Kind != jsjson.Object {
		return o // lenient: no structured fields
	}
	str := func(v *jsjson.Value, key string) (string, bool) {
		f := v.Get(key)
		if f == nil || f.Kind != jsjson.String {
			return "", false
		}
		return f.Str(), true
	}
	if c := v.Get("continue"); c != nil && c.Kind == jsjson.Bool && !c.Bool {
		o.stopped = true
		o.stopReason, _ = str(v, "stopReason")
	}
	o.systemMessage, _ = str(v, "systemMessage")
	if d, _ := str(v, "decision"); d == "approve" || d == "block" {
		o.decision = d
	}
	o.reason, _ = str(v, "reason")
	hso := v.Get("hookSpecificOutput")
	if hso == nil || hso.Kind != jsjson.Object {
		return o
	}
	if name, _ := str(hso, "hookEventName"); name != string(point) {
		return o // missing or another event's: its fields are dropped
	}
	switch pd, _ := str(hso, "permissionDecision"); pd {
	case "allow", "deny", "ask":
		o.decision = pd
	}
	if r, ok := str(hso, "permissionDecisionReason"); ok {
		o.reason = r
	}
	o.additionalContext, _ = str(hso, "additionalContext")
	if u := hso.Get("updatedInput"); u != nil && u.Kind == jsjson.Object {
		o.updatedInput = true
	}
	return o
}

// plainContext makes a clean exit's plain stdout (trimmed, not starting
// with "{") the additional context when the hook gave none (Codex's
// UserPromptSubmit).
func (o *output) plainContext(exitCode *int, stdout string) {
	stdout = jsjson.Trim(stdout)
	if exitCode != nil && *exitCode == 0 && o.additionalContext == "" && stdout != "" && !strings.HasPrefix(stdout, "{") {
		o.additionalContext = stdout
	}
}

// merged is the outcome of every matched hook of one bridge at one point.
type merged struct {
	// rank is the winning rank (0 none, 1 allow, 2 ask, 3 deny).
	rank int
	// reason joins the non-empty reasons at the winning rank (ask or deny
	// only) with a blank line; "" when there are none.
	reason string
	// contexts are every non-empty additionalContext, in hook order.
	contexts []string
	// stopped is the first continue:false (computed, never acted upon).
	stopped    bool
	stopReason string
	// systemMessages are collected, never surfaced.
	systemMessages []string
}

// merge folds per-hook outputs in hook order (hp/merge.ts).
func merge(outs []output) merged {
	var m merged
	for _, o := range outs {
		m.rank = max(m.rank, rank(o.decision))
	}
	var reasons []string
	for _, o := range outs {
		if m.rank >= 2 && rank(o.decision) == m.rank && o.reason != "" {
			reasons = append(reasons, o.reason)
		}
		if o.additionalContext != "" {
			m.contexts = append(m.contexts, o.additionalContext)
		}
		if o.stopped && !m.stopped {
			m.stopped, m.stopReason = true, o.stopReason
		}
		if o.systemMessage != "" {
			m.systemMessages = append(m.systemMessages, o.systemMessage)
		}
	}
	m.reason = strings.Join(reasons, "\n\n")
	return m
}

// --8<-- [start:mapping]
// preDecision maps a merged PreToolUse outcome onto the pipeline: deny
// always decides; a Claude Code ask decides (approval follows); everything
// else, a Codex ask included, delegates to the next listener (decided false),
// so an allow never pre-approves anything.
func preDecision(d *Dialect, m merged) (dec pipeline.Decision, decided bool) {
	switch {
	case m.rank == 3:
		reason := m.reason
		if reason == "" {
			reason = FallbackPreReason
		}
		return pipeline.Deny(reason), true
	case m.rank == 2 && d.asks:
		return pipeline.Ask(m.reason), true
	}
	return pipeline.Decision{}, false
}

// postDecision maps a merged PostToolUse outcome onto the pipeline. A deny
// blocks with the reason as feedback (no "Error: " prefix) and skips the
// inner listeners; otherwise next decides and the bridge's context message,
// if any, goes first among the decision's.
func postDecision(d *Dialect, m merged, next func() (pipeline.PostDecision, error)) (pipeline.PostDecision, error) {
	var ctx []pipeline.ContextMessage
	if len(m.contexts) > 0 {
		ctx = []pipeline.ContextMessage{{Plugin: d.Plugin, Texts: append([]string(nil), m.contexts...)}}
	}
	if m.rank == 3 {
		reason := m.reason
		if reason == "" {
			reason = FallbackPostReason
		}
		return pipeline.PostDecision{Kind: pipeline.PostBlock, Feedback: []pipeline.Block{pipeline.TextBlock(reason)}, ContextMessages: ctx}, nil
	}
	dn, err := next()
	if err != nil || ctx == nil {
		return dn, err
	}
	dn.ContextMessages = append(ctx, dn.ContextMessages...)
	return dn, nil
}

// --8<-- [end:mapping]

// summary is hook/result's stderrSummary: the trimmed stderr, cut to max
// UTF-16 code units plus "…" when longer ("" means omitted).
func summary(stderr string, maxUnits int) string {
	s := jsjson.Trim(stderr)
	units := utf16.Encode([]rune(s))
	if len(units) <= maxUnits {
		return s
	}
	return string(utf16.Decode(units[:maxUnits])) + "…"
}
