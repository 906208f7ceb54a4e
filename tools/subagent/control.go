package subagent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/tools/toolreg"
)

// Tool names of the control tools.
const (
	SendMessageName = "send_message"
	InterruptName   = "interrupt_agent"
	ListName        = "list_agents"
	ReportName      = "report"
)

// tools are send_message, interrupt_agent and list_agents over c.svc, in
// that order.
func (c control) tools() []toolreg.Tool {
	return []toolreg.Tool{
		{Def: pipeline.Tool{Name: SendMessageName, Description: SendMessageDescription, Run: c.send, Parameters: pipeline.ObjectSchema([]pipeline.Param{
			{Name: "subagent_id", Type: "string", Description: SubagentIDDescription},
			{Name: "message", Type: "string", Description: MessageDescription},
		}, []string{"subagent_id", "message"})}},
		{Def: pipeline.Tool{Name: InterruptName, Description: InterruptDescription, Run: c.interrupt, Parameters: pipeline.ObjectSchema([]pipeline.Param{
			{Name: "agent_id", Type: "string", Description: AgentIDDescription},
		}, []string{"agent_id"})}},
		{Def: pipeline.Tool{Name: ListName, Description: ListDescription, Run: c.list, Parameters: pipeline.ObjectSchema([]pipeline.Param{
			{Name: "scope", Type: "string", Description: ScopeDescription, Enum: []string{"children", "descendants"}},
		}, nil)}},
	}
}

// Report returns the registration of the report tool a continuable
// child's own scope gets (upstream's tool-subagent-report) over
// cfg.Service, with its tool:report prompt section (order 117).
func Report(cfg Config) ([]toolreg.Tool, error) {
	c := control{svc: cfg.Service}
	return []toolreg.Tool{{Def: pipeline.Tool{Name: ReportName, Description: ReportDescription, Run: c.report, Parameters: pipeline.ObjectSchema([]pipeline.Param{
		{Name: "output", Type: "string", Description: OutputDescription},
	}, []string{"output"})}, Section: &toolreg.Section{Name: "tool:report", Order: ReportSectionOrder, Text: ReportSection}}}, nil
}

type control struct{ svc Service }

// agentless is the refusal of a control tool called without an agent.
func agentless(tool string) error {
	return errors.New(tool + " requires a calling agent (exec.agent was undefined)")
}

func (c control) send(ctx context.Context, call *pipeline.Call) (pipeline.Output, error) {
	var a struct {
		SubagentID string `json:"subagent_id"`
		Message    string `json:"message"`
	}
	if err := agentArgs(call, &a, SendMessageName); err != nil {
		return pipeline.Output{}, err
	}
	id, err := c.svc.Followup(ctx, call.Agent(), a.SubagentID, a.Message)
	if err != nil {
		return pipeline.Output{}, err
	}
	return output("message queued as the next turn for subagent "+a.SubagentID, map[string]string{"messageId": id}), nil
}

func (c control) interrupt(ctx context.Context, call *pipeline.Call) (pipeline.Output, error) {
	var a struct {
		AgentID string `json:"agent_id"`
	}
	if err := agentArgs(call, &a, InterruptName); err != nil {
		return pipeline.Output{}, err
	}
	if err := c.svc.Interrupt(call.Agent(), a.AgentID); err != nil {
		return pipeline.Output{}, err
	}
	return output("interrupt requested for agent "+a.AgentID, map[string]bool{"accepted": true}), nil
}

// agentArgs decodes call's arguments into a; a call without an agent
// (no caller to act for) is refused by tool's name.
func agentArgs(call *pipeline.Call, a any, tool string) error {
	if err := call.DecodeArgs(a); err != nil {
		return fmt.Errorf("invalid arguments: %w", err)
	}
	if call.Agent() == nil {
		return agentless(tool)
	}
	return nil
}

// listValue is one list_agents value row, in upstream's key order.
type listValue struct {
	Kind   string `json:"kind"`
	ID     string `json:"id"`
	Label  string `json:"label,omitempty"`
	Status string `json:"status,omitempty"`
	Reason string `json:"reason,omitempty"`
	Parent string `json:"parent,omitempty"`
	Depth  int    `json:"depth,omitempty"`
}

func (c control) list(ctx context.Context, call *pipeline.Call) (pipeline.Output, error) {
	var a struct {
		Scope string `json:"scope"`
	}
	if err := agentArgs(call, &a, ListName); err != nil {
		return pipeline.Output{}, err
	}
	descendants := a.Scope == "descendants"
	entries, err := c.svc.List(ctx, call.Agent(), descendants)
	if err != nil {
		return pipeline.Output{}, err
	}
	text, values := RenderList(entries, descendants)
	return output(text, values), nil
}

// RenderList renders list_agents' text (VERBATIM) and value: continuable
// children and diagnostics only (one-shot children are left out), one line
// each, "<id> [<status>]<at> — <label>" or "<id> [diagnostic: <reason>]<at>",
// where <at> is " parent=<id> depth=<n>" only for the descendants scope;
// "(no subagents)" when nothing is left.
func RenderList(entries []Entry, descendants bool) (string, []listValue) {
	var lines []string
	values := []listValue{}
	for _, e := range entries {
		if e.Diagnostic == "" && !e.Continuable {
			continue
		}
		at := ""
		v := listValue{ID: e.ID}
		if descendants {
			at = " parent=" + e.Parent + " depth=" + strconv.Itoa(e.Depth)
			v.Parent, v.Depth = e.Parent, e.Depth
		}
		if e.Diagnostic != "" {
			v.Kind, v.Reason = "diagnostic", e.Diagnostic
			lines = append(lines, e.ID+" [diagnostic: "+e.Diagnostic+"]"+at)
		} else {
			v.Kind, v.Label, v.Status = "child", e.Label, e.Status
			lines = append(lines, e.ID+" ["+e.Status+"]"+at+" — "+e.Label)
		}
		values = append(values, v)
	}
	if len(lines) == 0 {
		return NoSubagents, values
	}
	return strings.Join(lines, "\n"), values
}

func (c control) report(ctx context.Context, call *pipeline.Call) (pipeline.Output, error) {
	var a struct {
		Output string `json:"output"`
	}
	if err := call.DecodeArgs(&a); err != nil {
		return pipeline.Output{}, fmt.Errorf("invalid arguments: %w", err)
	}
	id, err := c.svc.Report(ctx, call.Agent(), a.Output)
	if err != nil {
		return pipeline.Output{}, err
	}
	raw, _ := json.Marshal(map[string]string{"messageId": id})
	return pipeline.Output{Content: []pipeline.Block{pipeline.TextBlock("report accepted by the agent that started you as message " + id)}, Value: raw}, nil
}
