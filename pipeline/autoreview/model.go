package autoreview

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Prompt is the text a model reviewer is asked with for s: the instructions
// and the call, with its arguments as JSON.
func Prompt(s Subject) string {
	var b strings.Builder
	b.WriteString("You review one tool call of a coding agent before it runs. Rate the risk of its effects and decide.\n")
	b.WriteString("An approved call runs with full access: no sandbox confines it. A rejected call is shown to the user, who may still allow it once inside the sandbox.\n")
	b.WriteString("Approve only calls whose effects are plainly limited to the task and easy to undo; reject anything destructive, anything outside the project, credentials, network transfers you cannot justify, or anything you are unsure about.\n")
	b.WriteString(`Reply with exactly one JSON object and nothing else: {"verdict":"approve"|"reject","risk":"low"|"medium"|"high","rationale":"<one sentence>"}` + "\n\n")
	fmt.Fprintf(&b, "Agent: %s\nTool: %s\nCall id: %s\n", s.Agent, s.Tool, s.CallID)
	var args bytes.Buffer
	if err := json.Indent(&args, s.Args, "", "  "); err != nil {
		args.Reset()
		args.Write(s.Args)
	}
	fmt.Fprintf(&b, "Arguments:\n%s\n", args.String())
	if s.Reason != "" && s.Reason != AskReason {
		fmt.Fprintf(&b, "Why a policy asked: %s\n", s.Reason)
	}
	return b.String()
}

// ParseVerdict decodes a model's reply: one JSON object (optionally inside
// one ```json fence) with verdict approve or reject, risk low, medium or
// high, and a non-empty rationale. Anything else is an error, which fails the
// review closed.
func ParseVerdict(reply string) (Verdict, error) {
	text := strings.TrimSpace(reply)
	if rest, ok := strings.CutPrefix(text, "```"); ok {
		rest = strings.TrimPrefix(rest, "json")
		body, ok := strings.CutSuffix(strings.TrimSpace(rest), "```")
		if !ok {
			return Verdict{}, errors.New("reviewer reply: unterminated ``` fence")
		}
		text = strings.TrimSpace(body)
	}
	var raw struct {
		Verdict   *string `json:"verdict"`
		Risk      *string `json:"risk"`
		Rationale *string `json:"rationale"`
	}
	dec := json.NewDecoder(strings.NewReader(text))
	if err := dec.Decode(&raw); err != nil {
		return Verdict{}, fmt.Errorf("reviewer reply is not a JSON object: %w", err)
	}
	if dec.More() {
		return Verdict{}, errors.New("reviewer reply: text after the JSON object")
	}
	var v Verdict
	switch {
	case raw.Verdict == nil:
		return Verdict{}, errors.New(`reviewer reply: field "verdict" is missing`)
	case *raw.Verdict == "approve":
		v.Approve = true
	case *raw.Verdict == "reject":
	default:
		return Verdict{}, fmt.Errorf(`reviewer reply: field "verdict" is %q, want "approve" or "reject"`, *raw.Verdict)
	}
	switch {
	case raw.Risk == nil:
		return Verdict{}, errors.New(`reviewer reply: field "risk" is missing`)
	case *raw.Risk != "low" && *raw.Risk != "medium" && *raw.Risk != "high":
		return Verdict{}, fmt.Errorf(`reviewer reply: field "risk" is %q, want "low", "medium" or "high"`, *raw.Risk)
	}
	v.Risk = *raw.Risk
	if raw.Rationale == nil || strings.TrimSpace(*raw.Rationale) == "" {
		return Verdict{}, errors.New(`reviewer reply: field "rationale" is missing or empty`)
	}
	v.Rationale = strings.TrimSpace(*raw.Rationale)
	return v, nil
}

// ModelReviewer is a [Reviewer] over a text completion: a model client
// supplies Complete (send the prompt, return the reply text).
type ModelReviewer struct {
	// Complete sends prompt to the model and returns its reply.
	Complete func(ctx context.Context, prompt string) (string, error)
}

// Review asks the model with [Prompt] and decodes the reply with [ParseVerdict].
func (m ModelReviewer) Review(ctx context.Context, s Subject) (Verdict, error) {
	if m.Complete == nil {
		return Verdict{}, errors.New("model reviewer: no completion function")
	}
	reply, err := m.Complete(ctx, Prompt(s))
	if err != nil {
		return Verdict{}, fmt.Errorf("model reviewer: %w", err)
	}
	return ParseVerdict(reply)
}
