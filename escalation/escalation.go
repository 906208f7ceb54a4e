package escalation

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/sandbox"
)

// Subjects of an escalation: what the model retries.
const (
	// SubjectCommand is the bash tool's subject.
	SubjectCommand = "command"
	// SubjectOperation is the file tools' subject.
	SubjectOperation = "operation"
)

// --8<-- [start:wider-modes]
// WiderModes is the widening table: the modes strictly wider than each mode.
// Anything not listed (danger-full-access, unknown modes) widens to nothing.
var WiderModes = map[sandbox.Mode][]sandbox.Mode{
	sandbox.ReadOnly:       {sandbox.WorkspaceWrite, sandbox.DangerFullAccess},
	sandbox.WorkspaceWrite: {sandbox.DangerFullAccess},
}

// --8<-- [end:wider-modes]

// Targets is the closed set of modes sandbox_permissions may name (the schema enum).
var Targets = []sandbox.Mode{sandbox.WorkspaceWrite, sandbox.DangerFullAccess}

// IsWider reports whether requested is strictly wider than effective.
func IsWider(effective, requested sandbox.Mode) bool {
	for _, m := range WiderModes[effective] {
		if m == requested {
			return true
		}
	}
	return false
}

// PermissionsDescription is the VERBATIM schema description of
// sandbox_permissions as upstream's recordings pin it (tool-schemas.expected.json
// of text-turn and session-query-spill; the newer upstream rewords it, but
// that wording is not what the recorded model saw).
func PermissionsDescription(subject string) string {
	if subject == SubjectOperation {
		return "The wider sandbox mode this file operation needs. Only valid as a one-shot retry of an operation the sandbox just denied; requires justification and user approval."
	}
	return "The wider sandbox mode this command needs. Only valid as a one-shot retry of a command the sandbox just denied; requires justification and user approval."
}

// JustificationDescription is the VERBATIM schema description of
// justification, as the recordings pin it.
func JustificationDescription(subject string) string {
	what := "command"
	if subject == SubjectOperation {
		what = "file operation"
	}
	return "Required with sandbox_permissions: one sentence for the user explaining why this exact " + what + " needs the wider access."
}

// SchemaParams returns the two properties a tool adds to its parameters when
// escalation is advertised (neither is required), in upstream's order.
func SchemaParams(subject string) []pipeline.Param {
	enum := make([]string, len(Targets))
	for i, m := range Targets {
		enum[i] = string(m)
	}
	return []pipeline.Param{
		{Name: "sandbox_permissions", Type: "string", Description: PermissionsDescription(subject), Enum: enum},
		{Name: "justification", Type: "string", Description: JustificationDescription(subject)},
	}
}

// Args are the two escalation arguments as decoded from a call; nil = absent.
type Args struct {
	SandboxPermissions *string `json:"sandbox_permissions,omitempty"`
	Justification      *string `json:"justification,omitempty"`
}

// VERBATIM pairing errors, in the order they are checked.
var (
	ErrPermissionsWithoutJustification = errors.New("invalid escalation: sandbox_permissions requires a justification")
	ErrJustificationWithoutPermissions = errors.New("invalid escalation: justification is only valid together with sandbox_permissions")
	ErrBlankJustification              = errors.New("invalid justification: expected a non-empty sentence")
)

// CheckPairing runs the three pairing checks in order: neither field, or both
// with a non-blank justification, is accepted.
func CheckPairing(a Args) error {
	switch {
	case a.SandboxPermissions != nil && a.Justification == nil:
		return ErrPermissionsWithoutJustification
	case a.SandboxPermissions == nil && a.Justification != nil:
		return ErrJustificationWithoutPermissions
	case a.Justification != nil && strings.TrimSpace(*a.Justification) == "":
		return ErrBlankJustification
	}
	return nil
}

// PlanCommand applies the bash rules (newer upstream): a sandbox_permissions
// equal to the standing mode skips the pairing check and asks nothing; a blank
// justification sent without sandbox_permissions is ignored; otherwise the
// pairing checks apply. escalate is true when Approve must run.
func PlanCommand(a Args, standing sandbox.Mode) (req Request, escalate bool, err error) {
	if a.SandboxPermissions != nil && sandbox.Mode(*a.SandboxPermissions) == standing {
		return Request{}, false, nil
	}
	if a.SandboxPermissions == nil && a.Justification != nil && strings.TrimSpace(*a.Justification) == "" {
		return Request{}, false, nil
	}
	return plan(a, standing, SubjectCommand)
}

// PlanOperation applies the file-tool rules: the pairing checks apply in full;
// a same-mode request then returns without approval (Approve's first step).
func PlanOperation(a Args, standing sandbox.Mode) (req Request, escalate bool, err error) {
	return plan(a, standing, SubjectOperation)
}

func plan(a Args, standing sandbox.Mode, subject string) (Request, bool, error) {
	if err := CheckPairing(a); err != nil {
		return Request{}, false, err
	}
	if a.SandboxPermissions == nil {
		return Request{}, false, nil
	}
	return Request{Requested: sandbox.Mode(*a.SandboxPermissions), Justification: *a.Justification, Effective: standing, Subject: subject}, true, nil
}

// Deps are what Approve needs besides the request.
type Deps struct {
	// Approver is the approval service; nil when none is composed.
	Approver pipeline.Approver
	// Agent routes the request; nil for agentless calls.
	Agent *pipeline.Agent
	// CallID and ToolName are audited with the request.
	CallID, ToolName string
	// Args are the call's arguments, shown to every answerer with the
	// tool, the modes and the justification (never audited).
	Args json.RawMessage
}

// Reason is the VERBATIM audited approval reason (justification untrimmed).
func Reason(mode sandbox.Mode, justification string) string {
	return "escalate sandbox to " + string(mode) + ": " + justification
}

// --8<-- [start:approve]
// Approve decides one escalation, fail closed, in order: a request for the
// current mode returns it (no approval, no error); a request not strictly
// wider is refused without a prompt; no approval service, no agent refuse;
// otherwise the user is asked with reason `escalate sandbox to <mode>:
// <justification>`, every answerer seeing the call (tool, arguments, modes,
// justification), and only allowed-once returns the mode. Every refusal is
// a model-facing error; nothing has run when one is returned.
func Approve(ctx context.Context, req Request, deps Deps) (sandbox.Mode, error) {
	mode := req.Requested
	if mode == req.Effective {
		return mode, nil
	}
	if !IsWider(req.Effective, mode) {
		return "", fmt.Errorf("sandbox escalation to %q is not strictly wider than this call's current %q mode", string(mode), string(req.Effective))
	}
	if deps.Approver == nil {
		return "", fmt.Errorf("sandbox escalation to %q requires approval, but no approval service is composed", string(mode))
	}
	if deps.Agent == nil {
		return "", fmt.Errorf("sandbox escalation to %q requires approval, but the call has no agent to route it through", string(mode))
	}
	outcome, err := request(ctx, deps.Approver, pipeline.ApprovalRequest{
		Agent:    deps.Agent,
		ToolName: deps.ToolName,
		CallID:   deps.CallID,
		Reason:   Reason(mode, req.Justification),
		DisplayReason: &pipeline.DisplayReason{
			En: "Allow this operation with " + string(mode) + " permissions: " + req.Justification,
			Zh: "允许本次操作使用 " + string(mode) + " 权限：" + req.Justification,
		},
		Escalation: &pipeline.EscalationAsk{Tool: deps.ToolName, Args: deps.Args, Mode: string(mode), Standing: string(req.Effective), Justification: req.Justification},
	})
	if err != nil {
		return "", err
	}
	subject := req.Subject
	if subject == "" {
		subject = SubjectCommand
	}
	switch outcome {
	case pipeline.AllowedOnce:
		return mode, nil
	case pipeline.Rejected:
		// The recorded session (escalation-rejected) wins over the newer suffix.
		return "", fmt.Errorf("the user rejected escalating this %s to %q", subject, string(mode))
	case pipeline.Cancelled:
		return "", fmt.Errorf("approval for escalating to %q was cancelled", string(mode))
	case pipeline.Unavailable:
		return "", fmt.Errorf("sandbox escalation to %q requires approval, but no approval channel is available", string(mode))
	}
	return "", fmt.Errorf("unreachable variant in EscalationOutcome: %s", quoteJSON(string(outcome)))
}

// --8<-- [end:approve]

// New returns the escalation function bound to an approval service (nil when
// none is composed); the bash and file tools take it injected. The granted
// mode is returned for that one call only and never stored anywhere.
func New(approver pipeline.Approver) Func {
	return func(ctx context.Context, call *pipeline.Call, req Request) (sandbox.Mode, error) {
		deps := Deps{Approver: approver}
		if call != nil {
			deps.Agent, deps.CallID, deps.ToolName, deps.Args = call.Agent(), call.CallID(), call.Name(), call.Args()
			if ctx == nil {
				ctx = call.Signal()
			}
		}
		if ctx == nil {
			ctx = context.Background()
		}
		return Approve(ctx, req, deps)
	}
}

// request calls the approver; a panic is an error, never a grant.
func request(ctx context.Context, a pipeline.Approver, req pipeline.ApprovalRequest) (o pipeline.ApprovalOutcome, err error) {
	defer func() {
		if v := recover(); v != nil {
			o, err = "", fmt.Errorf("approval service failed: %v", v)
		}
	}()
	return a.Request(ctx, req)
}

func quoteJSON(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
