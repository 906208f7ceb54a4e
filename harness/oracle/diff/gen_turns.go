package diff

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/dshsim/dshsim/harness/oracle"
	"github.com/dshsim/dshsim/harness/replay/recording"
)

// The turns profile: a session of several prompts whose replies end in
// every way a turn can end (a text, an empty reply, a reply cut by
// max-tokens, an error finish with or without a retry policy), under
// UserPromptSubmit and Stop hooks of both dialects. Each move adds one
// prompt with its turn; turnsScript lays the turns out as llm-replay hands
// the steps out, which is in order across turns, so the generator counts
// the model calls upstream makes:
//
//   - a prompt a UserPromptSubmit hook blocks gets no model call (an empty
//     turn). The blocking hooks look for blockWord in the prompt, so which
//     prompt they block does not depend on what ran before;
//   - a Stop hook that blocks does so once (a marker file), at the first
//     turn that stops, and its steering costs one more step: a text, so
//     that the turn ends after it whatever it ended with before;
//   - an error finish that is not retried ends the turn (its prompt is
//     answered with an error); while a steering Stop hook has not fired, no
//     turn ends in an error, so the turn it fires in is known;
//   - a failed attempt the policy retries stays in the step's chunks, and
//     an attempt it does not retry is the step's last.

// blockWord in a prompt makes the blocking UserPromptSubmit hooks block it.
const blockWord = "BLOCK-THIS"

// turnPlan is one prompt and its model steps.
type turnPlan struct {
	prompt string
	steps  []oracle.Step
	// blocked: a UserPromptSubmit hook blocks the prompt (no step).
	blocked bool
	// failed: the turn ends in an error (the prompt's answer is an error).
	failed bool
	// cut: the turn's last step ended at max-tokens.
	cut bool
}

// turnState is what the turns profile knows while it generates.
type turnState struct {
	plans []turnPlan
	// promptBlocks: a UserPromptSubmit hook blocks prompts with blockWord.
	promptBlocks bool
	// stopSteers: a Stop hook blocks once; armed until a turn stops.
	stopSteers, stopArmed bool
	// retry is the policy of PROBE_RETRY (nil: none).
	retry *retryPolicy
	calls int // raw tool-call blocks so far, for their ids
}

// retryPolicy is the generated PROBE_RETRY policy.
type retryPolicy struct {
	maxRetries int
	codes      []string // nil: the default retryable codes
}

// defaultRetryable are upstream's retryable codes in normal mode.
var defaultRetryable = []string{"EMPTY_RESPONSE", "RATE_LIMIT", "SERVER", "TIMEOUT", "TRANSPORT"}

// failureCodes are the codes failed attempts carry, with upstream's words.
var failureCodes = [][2]string{
	{"RATE_LIMIT", "rate limited"},
	{"SERVER", "simulated provider error (HTTP 500)"},
	{"TIMEOUT", "request timed out"},
	{"TRANSPORT", "socket hang up"},
	{"EMPTY_RESPONSE", "model returned a completed response with no content"},
	{"AUTH", "simulated provider error (HTTP 401)"},
	{"UNKNOWN", "something else went wrong"},
	{"CONTEXT_LENGTH", "prompt is too long"},
}

func (p *retryPolicy) retries(code string) bool {
	codes := p.codes
	if codes == nil {
		codes = defaultRetryable
	}
	for _, c := range codes {
		if c == code {
			return true
		}
	}
	return false
}

// json is the policy in PROBE_RETRY's compact form.
func (p *retryPolicy) json() string {
	args := o("mode", "normal", "maxRetries", p.maxRetries)
	if p.codes != nil {
		args = append(args, kv{"retryableCodes", p.codes})
	}
	args = append(args, kv{"backoff", o("initialDelayMs", 1, "maxDelayMs", 1, "jitterRatio", 0)})
	return string(raw(args))
}

// setupTurns seeds the hooks of the turn points and the retry policy.
func setupTurns(g *gen) {
	g.turns = &turnState{}
	g.hooks = true
	if g.chance(0.5) {
		p := &retryPolicy{maxRetries: 1 + g.r.IntN(2)}
		if g.chance(0.3) {
			p.codes = pick(g, []string{"RATE_LIMIT"}, []string{"AUTH", "SERVER"})
		}
		g.turns.retry = p
		g.set.Retry = p.json()
		g.mark(AreaRetry)
	}
	if g.chance(0.2) {
		return // no hooks
	}
	files := g.hookFiles()
	steerIn := files[g.r.IntN(len(files))]
	if g.chance(0.4) {
		steerIn = "" // no Stop hook steers
	}
	for _, f := range files {
		g.ws[f] = g.turnHooks(f, f == steerIn)
		if f == "hooks.json" {
			g.mark(AreaHooksClaude)
		} else {
			g.mark(AreaHooksCodex)
		}
	}
	g.turns.stopSteers = steerIn != ""
	g.turns.stopArmed = g.turns.stopSteers
}

// promptHookCommands are UserPromptSubmit hooks that do not block:
// contexts of both dialects, plain stdout, failures, malformed output.
var promptHookCommands = []string{
	"cat > /dev/null; exit 0",
	"cat > /dev/null; echo PLAIN_PROMPT_CONTEXT",
	`cat > /dev/null; printf '%s' '{"hookSpecificOutput":{"hookEventName":"UserPromptSubmit","additionalContext":"PROMPT_CONTEXT"}}'`,
	`cat > /dev/null; printf '%s' '{"hookSpecificOutput":{"hookEventName":"UserPromptSubmit","additionalContext":""}}'`,
	`cat > /dev/null; printf '%s' '{"hookSpecificOutput":{"hookEventName":"PreToolUse","additionalContext":"WRONG_EVENT"}}'`,
	`cat > /dev/null; printf '%s' '{"decision":"approve","reason":"fine"}'`,
	`cat > /dev/null; printf '%s' '{"continue":false,"stopReason":"stop here"}'`,
	"cat > /dev/null; echo soft failure >&2; exit 1",
	"cat > /dev/null; exit 3",
	"cat > /dev/null; no-such-command-dshgen",
	`cat > /dev/null; printf '%s' '{not json'`,
	"cat > /dev/null; printf '\\n\\n'",
	"cat > /dev/null; printf '  spaced context  \\n'",
	payloadEcho + " | sed 's/^/PAYLOAD /'",
}

// payloadEcho prints the hook's stdin payload without its transcript path
// (a file of the run); its session id and cwd are the recording's own.
const payloadEcho = `p=$(cat); printf '%s\n' "$p" | sed 's/"transcript_path":"[^"]*",\{0,1\}//'`

// promptBlockCommands block a prompt that holds blockWord (reading the
// whole payload first), in every way a hook blocks.
var promptBlockCommands = []string{
	`p=$(cat); case "$p" in *` + blockWord + `*) echo 'blocked by policy hook' >&2; exit 2;; esac; exit 0`,
	`p=$(cat); case "$p" in *` + blockWord + `*) exit 2;; esac; exit 0`,
	`p=$(cat); case "$p" in *` + blockWord + `*) printf '%s' '{"decision":"block","reason":"prompt refused"}';; esac; exit 0`,
	`p=$(cat); case "$p" in *` + blockWord + `*) printf '%s' '{"decision":"block"}';; esac; exit 0`,
}

// stopHookCommands are Stop hooks that do not block.
var stopHookCommands = []string{
	"cat > /dev/null; exit 0",
	"cat > /dev/null; echo plain stop stdout",
	"cat > /dev/null; echo soft failure >&2; exit 1",
	"cat > /dev/null; exit 3",
	`cat > /dev/null; printf '%s' '{not json'`,
	`cat > /dev/null; printf '%s' '{"decision":"approve"}'`,
	`cat > /dev/null; printf '%s' '{"continue":false,"stopReason":"stop"}'`,
	`cat > /dev/null; printf '%s' '{"hookSpecificOutput":{"hookEventName":"Stop","additionalContext":"IGNORED"}}'`,
}

// stopSteerCommand blocks the first turn that stops (marker: a file of
// its own per dialect), in the way given.
func stopSteerCommand(marker, how string) string {
	if strings.HasPrefix(how, "true; ") { // reads the payload itself
		return "if [ -f " + marker + " ]; then cat > /dev/null; exit 0; fi; touch " + marker + "; " + how
	}
	return "if [ -f " + marker + " ]; then cat > /dev/null; exit 0; fi; touch " + marker + "; cat > /dev/null; " + how
}

var stopSteers = []string{
	"echo 'Keep going: say more.' >&2; exit 2",
	"true; " + payloadEcho + " >&2; exit 2",
	"exit 2",
	`printf '%s' '{"decision":"block","reason":"Not done yet."}'`,
	`printf '%s' '{"decision":"block"}'`,
}

// turnMatchers: the turn points take no matcher; one given is ignored.
var turnMatchers = []string{"", "", "", "*", "[", "bash"}

// turnHooks is one dialect's config of UserPromptSubmit and Stop hooks.
func (g *gen) turnHooks(file string, steer bool) string {
	entry := func(cmd string, mayTimeOut bool) hookEntry {
		h := hookSpec{Type: "command", Command: cmd}
		if mayTimeOut && g.chance(0.04) {
			h.Command, h.Timeout = "cat > /dev/null; sleep 3", 1
		}
		return hookEntry{Matcher: pick(g, turnMatchers...), Hooks: []hookSpec{h}}
	}
	cfg := map[string][]hookEntry{}
	for range g.r.IntN(3) {
		cfg["UserPromptSubmit"] = append(cfg["UserPromptSubmit"], entry(pick(g, promptHookCommands...), true))
	}
	if g.chance(0.4) {
		cfg["UserPromptSubmit"] = append(cfg["UserPromptSubmit"], entry(pick(g, promptBlockCommands...), false))
		g.turns.promptBlocks = true
	}
	if len(cfg["UserPromptSubmit"]) > 0 {
		g.mark(AreaPromptHooks)
	}
	if g.chance(0.5) {
		cfg["Stop"] = append(cfg["Stop"], entry(pick(g, stopHookCommands...), true))
	}
	if steer {
		marker := ".stopped-" + strings.TrimSuffix(file, ".json")
		cfg["Stop"] = append(cfg["Stop"], hookEntry{Hooks: []hookSpec{{Type: "command", Command: stopSteerCommand(marker, pick(g, stopSteers...))}}})
	}
	if len(cfg["Stop"]) > 0 {
		g.mark(AreaStopHooks)
	}
	if g.chance(0.15) {
		// a tool hook beside them: its handler ids count with theirs
		cfg["PostToolUse"] = []hookEntry{{Matcher: "read", Hooks: []hookSpec{{Type: "command", Command: `cat > /dev/null; printf '%s' '{"hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"READ_CONTEXT"}}'`}}}}
	}
	b, err := json.MarshalIndent(map[string]any{"hooks": cfg}, "", "  ")
	if err != nil {
		panic("diff: marshal hooks: " + err.Error())
	}
	return string(b) + "\n"
}

// turnPrompt starts a turn's plan: its prompt (blocked when a hook blocks
// blockWord and the dice say so).
func (g *gen) turnPrompt() *turnPlan {
	n := len(g.turns.plans) + 1
	p := turnPlan{prompt: fmt.Sprintf("Prompt %d: do the generated step.", n)}
	if g.turns.promptBlocks && g.chance(0.35) {
		p.prompt = fmt.Sprintf("Prompt %d: %s, please.", n, blockWord)
		p.blocked = true
	}
	if n > 1 {
		g.mark(AreaMultiPrompt)
	}
	g.turns.plans = append(g.turns.plans, p)
	return &g.turns.plans[len(g.turns.plans)-1]
}

// leadCalls are the tool-call steps some turns make before their last step.
func (g *gen) leadCalls(p *turnPlan) {
	for range g.r.IntN(3) {
		var c oracle.Call
		switch g.r.IntN(3) {
		case 0:
			c = oracle.Call{Name: "read", Args: raw(o("file_path", pick(g, "a.txt", "sub/b.txt", "missing.txt")))}
			g.mark(AreaRead)
		case 1:
			c = oracle.Call{Name: "bash", Args: raw(o("command", pick(g, "echo TURN", "ls", "echo err >&2; exit 2"), "description", "Turn call"))}
			g.mark(AreaBashForeground)
		default:
			c = oracle.Call{Name: "write", Args: raw(o("file_path", "turn.txt", "content", fmt.Sprintf("turn %d\n", len(g.turns.plans))))}
			g.mark(AreaWrite)
		}
		p.steps = append(p.steps, g.attempts(oracle.Step{Calls: []oracle.Call{c}}, p))
		if p.failed {
			return
		}
	}
}

// openTurn starts a turn: its prompt, then (unless a hook blocks it) the
// calls before its last step; false when the turn has ended already
// (blocked, or failed in a call's step).
func (g *gen) openTurn() (*turnPlan, bool) {
	p := g.turnPrompt()
	if p.blocked {
		return p, false
	}
	g.leadCalls(p)
	return p, !p.failed
}

// moveTurnText: a turn whose reply is a text, after some calls.
func moveTurnText(g *gen) {
	p, ok := g.openTurn()
	if ok {
		p.steps = append(p.steps, g.attempts(oracle.Step{Text: pick(g, "DONE", "Line one.\nLine two.", "ünïcödé ✓")}, p))
	}
	g.endTurn(p)
}

// moveTurnEmpty: a reply with no block at all (a stop finish with usage
// only, or without usage).
func moveTurnEmpty(g *gen) {
	p, ok := g.openTurn()
	if !ok {
		return
	}
	chunks := []json.RawMessage{}
	if g.chance(0.7) {
		chunks = append(chunks, usageChunk(0))
	}
	chunks = append(chunks, finishChunk("stop"))
	p.steps = append(p.steps, oracle.Step{Chunks: chunks})
	g.mark(AreaEmptyReply)
	g.endTurn(p)
}

// moveTurnMaxTokens: a reply cut by max-tokens: a text whose block never
// ended, a finished text and a cut call, a cut call alone (an empty
// assistant message), or a finished text alone. The turn ends there.
func moveTurnMaxTokens(g *gen) {
	p, ok := g.openTurn()
	if !ok {
		return
	}
	var chunks []json.RawMessage
	switch g.r.IntN(4) {
	case 0:
		chunks = append(chunks, chunk(o("type", "block-start", "index", 0, "blockType", "text")),
			chunk(o("type", "text-delta", "index", 0, "text", "The report was cut")))
	case 1:
		chunks = append(chunks, textChunks(0, "Here is the first part")...)
		chunks = append(chunks, g.cutCall(1)...)
	case 2:
		chunks = append(chunks, g.cutCall(0)...)
	default:
		chunks = append(chunks, textChunks(0, "A finished text at the limit")...)
	}
	chunks = append(chunks, usageChunk(4096), finishChunk("max-tokens"))
	p.steps = append(p.steps, oracle.Step{Chunks: chunks})
	p.cut = true
	g.mark(AreaMaxTokens)
	g.endTurn(p)
}

// cutCall is a tool-call block that never ended (its arguments cut).
func (g *gen) cutCall(index int) []json.RawMessage {
	g.turns.calls++
	id := fmt.Sprintf("call_%02d_cut%04d", index, g.turns.calls)
	return []json.RawMessage{
		chunk(o("type", "block-start", "index", index, "blockType", "tool-call")),
		chunk(o("type", "tool-call-delta", "index", index, "id", id, "name", pick(g, "read", "bash"), "argumentsDelta", pick(g, `{"file_path": "a.t`, `{"command": "ec`, ``))),
	}
}

// moveTurnError: a reply that fails (an error finish, some after a
// partial text); whether the policy retries it decides the turn's end.
func moveTurnError(g *gen) {
	p, ok := g.openTurn()
	if !ok {
		return
	}
	last := oracle.Step{Text: "Recovered."}
	if g.turns.stopArmed {
		// the steering Stop hook has not fired: this turn must stop
		p.steps = append(p.steps, g.attempts(last, p))
	} else {
		p.steps = append(p.steps, g.failing(last, p, 1+g.r.IntN(3)))
	}
	g.endTurn(p)
}

// endTurn adds the steering step to the first turn that stops while the
// steering Stop hook is armed: a text, sometimes after a call (not after a
// cut reply: whether a steered call's step is followed by another model
// call there is upstream's sticky end, pinned by max-tokens-sticky).
func (g *gen) endTurn(p *turnPlan) {
	if p.blocked || p.failed || len(p.steps) == 0 || !g.turns.stopArmed {
		return
	}
	if !p.cut && g.chance(0.4) {
		p.steps = append(p.steps, oracle.Step{Calls: []oracle.Call{{Name: "read", Args: raw(o("file_path", "a.txt"))}}})
		g.mark(AreaRead)
	}
	p.steps = append(p.steps, oracle.Step{Text: pick(g, "STEERED", "Continuing as told.")})
	g.turns.stopArmed = false
}

// attempts is st, sometimes after failed attempts the policy retries.
func (g *gen) attempts(st oracle.Step, p *turnPlan) oracle.Step {
	if g.turns.retry == nil || g.turns.stopArmed || !g.chance(0.3) {
		return st
	}
	return g.failing(st, p, 1+g.r.IntN(2))
}

// failing is st's chunks after n failed attempts, cut at the first attempt
// the policy does not retry (then the turn fails).
func (g *gen) failing(st oracle.Step, p *turnPlan, n int) oracle.Step {
	var chunks []json.RawMessage
	for i := range n {
		f := pick(g, failureCodes...)
		if g.turns.retry != nil && g.chance(0.6) {
			f = pick(g, failureCodes[:5]...) // mostly retryable
		}
		if g.chance(0.2) {
			chunks = append(chunks, chunk(o("type", "block-start", "index", 0, "blockType", "text")),
				chunk(o("type", "text-delta", "index", 0, "text", "partial")))
		}
		if g.chance(0.8) {
			chunks = append(chunks, usageChunk(0))
		}
		chunks = append(chunks, chunk(o("type", "finish", "reason", o("kind", "error", "failure", o("message", f[1], "code", f[0])))))
		g.mark(AreaErrorFinish)
		if g.turns.retry == nil || i >= g.turns.retry.maxRetries || !g.turns.retry.retries(f[0]) {
			p.failed = true
			return oracle.Step{Chunks: chunks}
		}
	}
	return oracle.Step{Chunks: append(chunks, g.replyChunks(st)...)}
}

// replyChunks are st's chunks as the script encoder writes a reply (a
// text, or calls with ids of their own).
func (g *gen) replyChunks(st oracle.Step) []json.RawMessage {
	if len(st.Calls) == 0 {
		return append(textChunks(0, st.Text), usageChunk(1), finishChunk("stop"))
	}
	var out []json.RawMessage
	for k, c := range st.Calls {
		g.turns.calls++
		id := fmt.Sprintf("call_%02d_retried%04d", k, g.turns.calls)
		args := oracle.ArgumentsText(c.Args)
		out = append(out,
			chunk(o("type", "block-start", "index", k, "blockType", "tool-call")),
			chunk(o("type", "tool-call-delta", "index", k, "id", id, "name", c.Name, "argumentsDelta", args)),
			chunk(o("type", "block-end", "index", k, "block", o("type", "tool-call", "id", id, "name", c.Name, "arguments", args))))
	}
	return append(out, usageChunk(10), finishChunk("tool-calls"))
}

func textChunks(index int, text string) []json.RawMessage {
	return []json.RawMessage{
		chunk(o("type", "block-start", "index", index, "blockType", "text")),
		chunk(o("type", "text-delta", "index", index, "text", text)),
		chunk(o("type", "block-end", "index", index, "block", o("type", "text", "text", text))),
	}
}

func usageChunk(out int) json.RawMessage {
	return chunk(o("type", "usage", "usage", o("inputTokens", 100, "outputTokens", out, "cacheReadTokens", 0, "reasoningTokens", 0)))
}

func finishChunk(kind string) json.RawMessage {
	return chunk(o("type", "finish", "reason", o("kind", kind)))
}

func chunk(v obj) json.RawMessage { return raw(v) }

// turnsScript lays the plans out: a prompt per plan (one answered with an
// error when its turn fails), and a last one with a reply when every prompt
// was blocked.
func (g *gen) turnsScript() *oracle.Script {
	t := g.turns
	if !anyStep(t.plans) {
		p := g.turnPrompt()
		p.blocked, p.prompt = false, strings.ReplaceAll(p.prompt, blockWord, "say DONE")
		p.steps = []oracle.Step{{Text: "DONE"}}
		g.endTurn(p)
	}
	s := &oracle.Script{}
	failed := false
	for i := range t.plans {
		p := &t.plans[i]
		s.Turns = append(s.Turns, p.steps)
		op := "prompt"
		if p.failed {
			op, failed = "promptExpectError", true
		}
		s.Prompts = append(s.Prompts, p.prompt)
		s.Steps = append(s.Steps, recording.Step{Op: op, Text: p.prompt})
	}
	if failed {
		s.Prompts = nil
	} else {
		s.Steps = nil
	}
	return s
}

func anyStep(plans []turnPlan) bool {
	for _, p := range plans {
		if len(p.steps) > 0 {
			return true
		}
	}
	return false
}
