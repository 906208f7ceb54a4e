package sims

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/dshsim/dshsim/escalation"
	"github.com/dshsim/dshsim/harness"
	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/pipeline/approval"
	"github.com/dshsim/dshsim/pipeline/policy"
	"github.com/dshsim/dshsim/pipeline/session"
	"github.com/dshsim/dshsim/sandbox"
)

// escCase is one escalation request and how the constructed answerer behaves.
type escCase struct {
	standing  sandbox.Mode
	requested sandbox.Mode
	answerer  string // what the constructed answerer does, in words
	answer    approval.Answerer
	policy    approval.Policy // session approval/policy event, "" = none
	// abortDuringPrompt: the caller's context is cancelled while the prompt is open.
	abortDuringPrompt bool
}

func answerWith(o pipeline.ApprovalOutcome) approval.Answerer {
	return func(context.Context, *pipeline.ApprovalRequest, func() (pipeline.ApprovalOutcome, error)) (pipeline.ApprovalOutcome, error) {
		return o, nil
	}
}

const escJustification = "the user asked to write a file outside the workspace"

func escalationCases() []escCase {
	return []escCase{
		{standing: sandbox.ReadOnly, requested: sandbox.WorkspaceWrite, answerer: "allows once", answer: answerWith(pipeline.AllowedOnce)},
		{standing: sandbox.WorkspaceWrite, requested: sandbox.DangerFullAccess, answerer: "rejects", answer: answerWith(pipeline.Rejected)},
		{standing: sandbox.WorkspaceWrite, requested: sandbox.DangerFullAccess, answerer: "dismisses the prompt (cancelled)", answer: answerWith(pipeline.Cancelled)},
		{standing: sandbox.WorkspaceWrite, requested: sandbox.DangerFullAccess, answerer: "never answers; the caller aborts", abortDuringPrompt: true},
		{standing: sandbox.WorkspaceWrite, requested: sandbox.DangerFullAccess, answerer: "none registered"},
		{standing: sandbox.WorkspaceWrite, requested: sandbox.DangerFullAccess, answerer: "throws", answer: func(context.Context, *pipeline.ApprovalRequest, func() (pipeline.ApprovalOutcome, error)) (pipeline.ApprovalOutcome, error) {
			panic(errors.New("prompt window crashed"))
		}},
		{standing: sandbox.WorkspaceWrite, requested: sandbox.DangerFullAccess, answerer: `answers "allow-always" (not in the vocabulary)`, answer: answerWith("allow-always")},
		{standing: sandbox.WorkspaceWrite, requested: sandbox.DangerFullAccess, answerer: "would allow; policy never: not consulted", answer: answerWith(pipeline.AllowedOnce), policy: approval.Never},
		{standing: sandbox.DangerFullAccess, requested: sandbox.WorkspaceWrite, answerer: "would allow (no prompt is raised)", answer: answerWith(pipeline.AllowedOnce)},
	}
}

// escResult is what one case produced.
type escResult struct {
	outcome string
	model   string
	ran     bool
	audit   []session.Event
}

// The escalation sim: escalation.Approve with the real approval service,
// through the real tool pipeline; the agent, the answerers and the retried
// tool are constructed.
func runEscalation(env *harness.Env) (map[string][]byte, error) {
	ws, err := env.TempDir()
	if err != nil {
		return nil, err
	}
	n := harness.NewNormalizer().Workspace(ws)
	cases := escalationCases()
	results := make([]escResult, len(cases))
	for i, c := range cases {
		r, err := runEscalationCase(ws, i, c)
		if err != nil {
			return nil, fmt.Errorf("case %d: %w", i+1, err)
		}
		results[i] = r
	}

	var txt, out bytes.Buffer
	txt.WriteString("approveEscalation: nine cases, real approval service; agent, answerers and the retried call constructed\n")
	fmt.Fprintf(&txt, "%-2s %-40s %-46s %-13s %s\n", "#", "asked", "answerer", "outcome", "the model gets")
	out.WriteString("escalation: approveEscalation with the real approval service (package pipeline/approval) inside the real tool pipeline\n")
	out.WriteString("real: tool registry, approval service, session log (one per case, with an open turn), sandbox-policy resolver, escalation.Approve\n")
	out.WriteString("constructed: the agent, the answerers, and a retried call `write_outside` whose body only reports the mode it would run under\n")
	fmt.Fprintf(&out, "justification of every request: %q\n", escJustification)
	for i, c := range cases {
		r := results[i]
		asked := fmt.Sprintf("%s → %s", c.standing, c.requested)
		fmt.Fprintf(&txt, "%-2d %-40s %-46s %-13s %s\n", i+1, asked, c.answerer, r.outcome, n.String(r.model))

		fmt.Fprintf(&out, "\n%d. standing %s, sandbox_permissions %s; answerer %s", i+1, c.standing, c.requested, c.answerer)
		if c.policy != "" {
			fmt.Fprintf(&out, " (session approval/policy %s)", c.policy)
		}
		out.WriteString("\n")
		fmt.Fprintf(&out, "   outcome: %s\n", r.outcome)
		fmt.Fprintf(&out, "   call ran: %v\n", r.ran)
		fmt.Fprintf(&out, "   the model gets: %s\n", n.String(r.model))
		if len(r.audit) == 0 {
			out.WriteString("   audit events: none (no prompt was raised)\n")
		}
		for _, e := range r.audit {
			fmt.Fprintf(&out, "   audit seq %d %s %s\n", e.Seq, e.Type, n.String(string(e.Data)))
		}
	}
	only := 0
	for _, r := range results {
		if r.ran {
			only++
		}
	}
	fmt.Fprintf(&out, "\ncalls that ran: %d of %d (only allowed-once lets the call through)\n", only, len(cases))
	return map[string][]byte{"txt/escalation.txt": txt.Bytes(), "out/escalation.txt": out.Bytes()}, nil
}

func runEscalationCase(ws string, i int, c escCase) (escResult, error) {
	log, err := session.Create(filepath.Join(ws, fmt.Sprintf("session-%d.jsonl", i+1)), session.Header{ID: fmt.Sprintf("escalation-%d", i+1), Cwd: ws})
	if err != nil {
		return escResult{}, err
	}
	defer log.Close()
	if _, err := log.Append(session.KindTurnStart, session.TurnStart{Turn: 1}); err != nil {
		return escResult{}, err
	}
	if _, err := policy.SetSandboxMode(log, c.standing); err != nil {
		return escResult{}, err
	}
	if c.policy != "" {
		if _, err := approval.SetSessionPolicy(log, c.policy); err != nil {
			return escResult{}, err
		}
	}
	svc, err := approval.New()
	if err != nil {
		return escResult{}, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	switch {
	case c.abortDuringPrompt:
		svc.Answer(func(actx context.Context, _ *pipeline.ApprovalRequest, _ func() (pipeline.ApprovalOutcome, error)) (pipeline.ApprovalOutcome, error) {
			cancel() // the user closes the session while the prompt is open
			<-actx.Done()
			return pipeline.AllowedOnce, nil // a late answer: discarded
		})
	case c.answer != nil:
		svc.Answer(c.answer)
	}
	resolver, err := policy.NewResolver(policy.Config{DefaultMode: sandbox.ReadOnly, Root: ws})
	if err != nil {
		return escResult{}, err
	}
	ran := false
	reg := pipeline.NewRegistry()
	reg.SetApprover(svc)
	opening := escalation.Opening{Subject: escalation.SubjectCommand, Escalate: escalation.New(svc), Standing: func(call *pipeline.Call) (sandbox.Policy, error) {
		return resolver.Resolve(call.Agent(), "")
	}}
	if _, err := reg.Register(pipeline.Tool{Name: "write_outside", Run: func(ctx context.Context, call *pipeline.Call) (pipeline.Output, error) {
		final, err := opening.OpenCall(ctx, call)
		if err != nil {
			return pipeline.Output{}, err
		}
		ran = true
		return pipeline.Output{Content: []pipeline.Block{pipeline.TextBlock("(runs under " + string(final.Mode) + ")")}}, nil
	}}); err != nil {
		return escResult{}, err
	}
	args, _ := json.Marshal(map[string]string{"sandbox_permissions": string(c.requested), "justification": escJustification})
	agent := &pipeline.Agent{ID: "constructed-agent", Session: log}
	res := reg.Execute(pipeline.NewCall(fmt.Sprintf("call-%d", i+1), "write_outside", args, agent, ctx))

	events, err := log.Events()
	if err != nil {
		return escResult{}, err
	}
	r := escResult{model: res.Text(), ran: ran, outcome: "none"}
	for _, e := range events {
		if strings.HasPrefix(e.Type, session.KindApprovalAsked) || strings.HasPrefix(e.Type, session.KindApprovalDecided) {
			r.audit = append(r.audit, e)
		}
		if e.Type == session.KindApprovalDecided {
			var d struct{ Outcome string }
			if err := json.Unmarshal(e.Data, &d); err != nil {
				return escResult{}, err
			}
			r.outcome = d.Outcome
		}
	}
	if _, stored := session.Last(events[2:], session.KindSandboxMode); stored {
		return escResult{}, errors.New("a grant was stored in the session log")
	}
	return r, nil
}
