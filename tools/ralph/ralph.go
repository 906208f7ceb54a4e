//lint:file-ignore ST1005 the error texts are upstream's, VERBATIM: the model reads them as upstream's tool wrote them

package ralph

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf16"

	"github.com/dshsim/dshsim/internal/jsjson"
	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/pipeline/delegation"
	"github.com/dshsim/dshsim/pipeline/session"
	"github.com/dshsim/dshsim/tools/subagent"
	"github.com/dshsim/dshsim/tools/toolreg"
)

// Name is the tool name.
const Name = "ralph"

// Texts (VERBATIM).
const (
	Description = "Run a foreground fresh-agent Ralph loop toward one immutable objective. Use only when the direct human explicitly asks for Ralph or fresh-agent iteration. Each round opens a new child with no parent conversation or prior child session; the shared workspace is long-term memory, and only a bounded structured report crosses rounds. The call returns when a worker reports completion or a concrete blocker, or at the round limit. Ordinary long-running same-session work belongs to goal tools."
	Section     = "Use the ralph tool ONLY when the direct human explicitly asks for a Ralph loop or fresh-agent iterative execution. Each Ralph round starts a fresh child with no conversation seed and uses the shared workspace as durable memory. Completion and blockers are worker reports, not independent evaluation. Use same-session goal tools for ordinary long-running objectives, and plain subagents or workflows for bounded delegation and fan-out."
	// SectionOrder is the tool:ralph section's order.
	SectionOrder = 116
	parameters   = `{"type":"object","properties":{"objective":{"type":"string","description":"The immutable completion objective for every fresh Ralph round."},"maxRounds":{"type":"number","description":"Optional positive safe-integer round cap, bounded by the deployment ceiling."}},"required":["objective"]}`
	outputSchema = `{"type":"object","additionalProperties":false,"properties":{"runId":{"type":"string"},"agentsStarted":{"type":"integer"},"result":{}},"required":["runId","agentsStarted","result"]}`
	// ReportSchema is each round's structured report, as the fixed
	// script gives agent().
	ReportSchema = `{"type":"object","properties":{"status":{"type":"string","enum":["continue","complete","blocked"]},"summary":{"type":"string"},"evidence":{"type":"array","items":{"type":"string"}},"nextSteps":{"type":"array","items":{"type":"string"}},"blocker":{"type":"string"}},"required":["status","summary","evidence","nextSteps","blocker"],"additionalProperties":false}`
	firstRound   = "(none — this is the first round)"
	truncation   = "\n… [truncated]"
)

// Defaults of the deployment's caps (upstream's).
const (
	DefaultMaxRounds       = 256
	DefaultMaxHandoffChars = 16384
	DefaultMaxResultChars  = 16384
)

// Config configures the tool.
type Config struct {
	// Provider starts each round's fresh child ("": "spawn"); it must not
	// inherit the parent's context.
	Provider string
	// MaxRounds, MaxHandoffChars and MaxResultChars are the deployment's
	// caps (0: upstream's defaults).
	MaxRounds, MaxHandoffChars, MaxResultChars int
	// Service starts the children (required).
	Service subagent.Service
}

// New returns the ralph tool's registration, with its tool:ralph section.
func New(cfg Config) ([]toolreg.Tool, error) {
	if cfg.Service == nil {
		return nil, errors.New("ralph: no delegation service")
	}
	if cfg.Provider == "" {
		cfg.Provider = "spawn"
	}
	for _, c := range []struct {
		v   *int
		def int
	}{{&cfg.MaxRounds, DefaultMaxRounds}, {&cfg.MaxHandoffChars, DefaultMaxHandoffChars}, {&cfg.MaxResultChars, DefaultMaxResultChars}} {
		if *c.v < 0 {
			return nil, errors.New("ralph: caps must be positive safe integers")
		}
		if *c.v == 0 {
			*c.v = c.def
		}
	}
	return []toolreg.Tool{{
		Def:     pipeline.Tool{Name: Name, Description: Description, Parameters: json.RawMessage(parameters), OutputSchema: json.RawMessage(outputSchema), Run: cfg.run},
		Section: &toolreg.Section{Name: "tool:" + Name, Order: SectionOrder, Text: Section},
	}}, nil
}

// Prompt is round n of max's prompt for objective, after the previous
// round's report (nil: the first round).
func Prompt(objective string, n, max int, previous *jsjson.Value) string {
	prior := firstRound
	if previous != nil {
		prior = jsjson.Stringify(previous)
	}
	return strings.Join([]string{
		"You are one fresh worker in a foreground Ralph loop. You receive no parent conversation and no prior child session. Do not call the ralph tool: this round already is its worker.",
		"Immutable objective:\n" + objective,
		fmt.Sprintf("Ralph round: %d of %d.", n, max),
		"The shared workspace and its current working tree are the long-term memory and source of truth. Inspect them before acting, preserve existing work, perform concrete in-scope work, and verify what you change. Treat the previous report only as a bounded handoff; confirm it against the workspace.",
		"Previous structured handoff:\n" + prior,
		"Return one report with exact normalized strings. Use status continue with at least one nextSteps entry while useful work remains; complete only with concrete evidence and no nextSteps; blocked only when no meaningful progress is possible without human input or an external-state change. blocker must be empty unless blocked.",
	}, "\n\n")
}

// outcome is the loop's terminal result.
type outcome struct {
	status string // complete, blocked, budget-limited, round-failed
	rounds int
	report *jsjson.Value // the last report (nil: a first round that failed)
}

func (cfg Config) run(ctx context.Context, call *pipeline.Call) (pipeline.Output, error) {
	var args struct {
		Objective string   `json:"objective"`
		MaxRounds *float64 `json:"maxRounds"`
	}
	if err := call.DecodeArgs(&args); err != nil {
		return pipeline.Output{}, err
	}
	if call.Agent() == nil {
		return pipeline.Output{}, errors.New("Ralph tool requires a calling agent (exec.agent was undefined)")
	}
	objective := jsjson.Trim(args.Objective)
	if objective == "" {
		return pipeline.Output{}, errors.New("Ralph objective must be a non-empty string")
	}
	max, err := resolveMaxRounds(args.MaxRounds, cfg.MaxRounds)
	if err != nil {
		return pipeline.Output{}, err
	}
	out, started, err := cfg.loop(ctx, call, objective, max)
	switch {
	case ctx.Err() != nil:
		return pipeline.Output{}, errors.New("Ralph workflow was cancelled (parent step aborted)")
	case err != nil:
		return pipeline.Output{}, fmt.Errorf("Ralph workflow failed: %s", pipeline.ErrorMessage(err))
	case out.status == "round-failed":
		return pipeline.Output{}, errors.New(bound(roundFailure(out), cfg.MaxResultChars))
	}
	return cfg.output(out, started)
}

// resolveMaxRounds is the model's cap, bounded by the deployment's.
func resolveMaxRounds(requested *float64, ceiling int) (int, error) {
	v := float64(ceiling)
	if requested != nil {
		v = *requested
	}
	if v != float64(int64(v)) || v < 1 || v > 1<<53-1 {
		return 0, errors.New("Ralph maxRounds must be a positive safe integer")
	}
	if v > float64(ceiling) {
		return 0, fmt.Errorf("Ralph maxRounds %d exceeds the deployment ceiling %d", int64(v), ceiling)
	}
	return int(v), nil
}

// loop runs the rounds as upstream's fixed script does: one fresh
// structured child a round, its report checked, until a report completes
// or blocks, or the rounds are spent.
func (cfg Config) loop(ctx context.Context, call *pipeline.Call, objective string, max int) (outcome, int, error) {
	var previous *jsjson.Value
	started := 0
	for n := 1; n <= max; n++ {
		raw, err := cfg.round(ctx, call, Prompt(objective, n, max, previous), n)
		started++
		if err != nil {
			return outcome{}, started, err
		}
		if raw == nil {
			return outcome{status: "round-failed", rounds: n, report: previous}, started, nil
		}
		report, status, err := checkReport(raw, cfg.MaxHandoffChars)
		if err != nil {
			return outcome{}, started, err
		}
		if status != "continue" {
			return outcome{status: status, rounds: n, report: report}, started, nil
		}
		previous = report
	}
	return outcome{status: "budget-limited", rounds: max, report: previous}, started, nil
}

// round starts round n's child and waits for its report (nil: the child
// failed or reported nothing).
func (cfg Config) round(ctx context.Context, call *pipeline.Call, prompt string, n int) (json.RawMessage, error) {
	run, err := cfg.Service.Start(ctx, cfg.Provider, subagent.Request{Caller: call.Agent(), CallID: call.CallID(), Prompt: prompt,
		StepLabel: fmt.Sprintf("Ralph round %d", n), OutputSchema: json.RawMessage(ReportSchema)})
	if err != nil {
		return nil, errors.New(pipeline.ErrorMessage(err))
	}
	defer run.Dispose()
	res, err := run.Result(ctx)
	if err != nil || ctx.Err() != nil || res.Stop != delegation.StopCompleted || res.Structured == nil {
		return nil, nil
	}
	return res.Structured, nil
}

// checkReport checks a round's report as the fixed script does (its
// texts), keeping the child's key order.
func checkReport(raw json.RawMessage, maxChars int) (*jsjson.Value, string, error) {
	v, err := jsjson.Parse(raw)
	if err != nil || v.Kind != jsjson.Object {
		return nil, "", errors.New("Ralph child returned no structured round report")
	}
	text := func(k string) (string, bool) {
		f := v.Get(k)
		if f == nil || f.Kind != jsjson.String {
			return "", false
		}
		return f.Str(), true
	}
	list := func(k string) (int, bool) {
		f := v.Get(k)
		if f == nil || f.Kind != jsjson.Array {
			return 0, false
		}
		for _, e := range f.Elems {
			if s := e.Str(); e.Kind != jsjson.String || s == "" || s != jsjson.Trim(s) {
				return 0, false
			}
		}
		return len(f.Elems), true
	}
	summary, _ := text("summary")
	if summary == "" || summary != jsjson.Trim(summary) {
		return nil, "", errors.New("Ralph round report summary must be non-empty and normalized")
	}
	evidence, okE := list("evidence")
	next, okN := list("nextSteps")
	if !okE || !okN {
		return nil, "", errors.New("Ralph round report evidence and nextSteps must contain only non-empty normalized strings")
	}
	blocker, ok := text("blocker")
	if !ok || blocker != jsjson.Trim(blocker) {
		return nil, "", errors.New("Ralph round report blocker must be a normalized string")
	}
	status, _ := text("status")
	switch {
	case status == "continue" && (next == 0 || blocker != ""):
		return nil, "", errors.New("a continuing Ralph report needs nextSteps and an empty blocker")
	case status == "complete" && (evidence == 0 || next != 0 || blocker != ""):
		return nil, "", errors.New("a complete Ralph report needs evidence, no nextSteps, and an empty blocker")
	case status == "blocked" && blocker == "":
		return nil, "", errors.New("a blocked Ralph report needs a concrete blocker")
	case status != "continue" && status != "complete" && status != "blocked":
		return nil, "", errors.New("Ralph round report status is invalid")
	}
	if n := units(jsjson.Stringify(v)); n > maxChars {
		return nil, "", fmt.Errorf("Ralph round report exceeds maxHandoffChars (%d > %d)", n, maxChars)
	}
	return v, status, nil
}

// units is s's length in UTF-16 code units (JavaScript's length).
func units(s string) int { return len(utf16.Encode([]rune(s))) }

// canonical is a report in upstream's field order (readReport's).
func canonical(v *jsjson.Value) string {
	if v == nil {
		return "null"
	}
	fields := []string{"status", "summary", "evidence", "nextSteps", "blocker"}
	var b strings.Builder
	b.WriteString("{")
	for i, k := range fields {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(jsjson.Quote(k) + ":" + jsjson.Stringify(v.Get(k)))
	}
	b.WriteString("}")
	return b.String()
}

// indented is JSON.stringify(report, null, 2) of a canonical report.
func indented(v *jsjson.Value) string {
	c, _ := jsjson.Parse([]byte(canonical(v)))
	return jsjson.StringifyIndent(c, "  ")
}

// render is the parent-facing text of a finished loop.
func render(o outcome, maxChars int) string {
	rounds := fmt.Sprintf("%d round", o.rounds)
	if o.rounds != 1 {
		rounds += "s"
	}
	var text string
	switch o.status {
	case "complete":
		text = fmt.Sprintf("Ralph worker reported completion after %s.\nFinal report:\n%s", rounds, indented(o.report))
	case "blocked":
		text = fmt.Sprintf("Ralph worker reported a blocker after %s.\nFinal report:\n%s", rounds, indented(o.report))
	default:
		text = fmt.Sprintf("Ralph reached its %s limit; the worker reported work remaining.\nFinal report:\n%s", rounds, indented(o.report))
	}
	return bound(text, maxChars)
}

// roundFailure is the error of a round whose child produced no report.
func roundFailure(o outcome) string {
	head := fmt.Sprintf("Ralph round %d child failed before producing a structured report.", o.rounds)
	if o.report == nil {
		return head + "\nNo previous handoff was available."
	}
	return head + "\nLast successful handoff:\n" + indented(o.report)
}

// bound clips text to maxChars UTF-16 units, its end the truncation notice.
func bound(text string, maxChars int) string {
	u := utf16.Encode([]rune(text))
	if len(u) <= maxChars {
		return text
	}
	notice := utf16.Encode([]rune(truncation))
	if maxChars <= len(notice) {
		return string(utf16.Decode(notice[:maxChars]))
	}
	return string(utf16.Decode(u[:maxChars-len(notice)])) + truncation
}

// output is the tool's value and text.
func (cfg Config) output(o outcome, started int) (pipeline.Output, error) {
	result := fmt.Sprintf(`{"status":%s,"roundsStarted":%d,"report":%s}`, jsjson.Quote(o.status), o.rounds, canonical(o.report))
	value := fmt.Sprintf(`{"runId":%s,"agentsStarted":%d,"result":%s}`, jsjson.Quote(session.NewID()), started, result)
	return pipeline.Output{Value: json.RawMessage(value), Content: []pipeline.Block{pipeline.TextBlock(render(o, cfg.MaxResultChars))}}, nil
}
