package pipeline

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
)

// --8<-- [start:decisions]
// DecisionKind is the kind of a pre-execute decision. The set is closed:
// a decision of any other kind is an error, never an implicit allow.
type DecisionKind string

// The four pre-execute decision kinds, as the newer upstream has them
// (cancel joined allow, deny and ask).
const (
	// KindAllow lets the call continue to the guards.
	KindAllow DecisionKind = "allow"
	// KindDeny refuses the call with Reason (and optional Info).
	KindDeny DecisionKind = "deny"
	// KindCancel ends the call as ABORTED_BEFORE_DISPATCH.
	KindCancel DecisionKind = "cancel"
	// KindAsk routes the call through the approval service.
	KindAsk DecisionKind = "ask"
)

// DisplayReason is a localized prompt shown to the user only; it is never
// persisted and never reaches the model.
type DisplayReason struct {
	En string `json:"en"`
	Zh string `json:"zh"`
}

// Decision is what a pre-execute listener returns.
type Decision struct {
	// Kind is one of allow, deny, cancel, ask.
	Kind DecisionKind
	// Reason is the deny reason (model-facing, may be empty) or the optional ask
	// reason (audited, forwarded to the answerer; empty means absent).
	Reason string
	// Info is optional structured info of a deny; it becomes error.info.
	Info *ErrorInfo
	// DisplayReason is the optional user-facing prompt of an ask.
	DisplayReason *DisplayReason
	// Args, when non-nil, is an attempt to run different arguments. Arguments
	// are frozen once logged: a value that differs from the call's arguments
	// fails the call with [ErrArgsFrozen]; nothing is ever silently rewritten.
	Args json.RawMessage
}

// Allow returns an allow decision.
func Allow() Decision { return Decision{Kind: KindAllow} }

// Deny returns a deny decision with a model-facing reason.
func Deny(reason string) Decision { return Decision{Kind: KindDeny, Reason: reason} }

// Cancel returns a cancel decision.
func Cancel() Decision { return Decision{Kind: KindCancel} }

// Ask returns an ask decision; reason may be empty.
func Ask(reason string) Decision { return Decision{Kind: KindAsk, Reason: reason} }

// --8<-- [end:decisions]

// PreExecute is a tools/pre-execute listener. The first registered (or last
// prepended) listener is the outermost; next runs the rest of the chain and
// finally the terminal default, allow. A listener that returns without calling
// next overrides everything inside it. A returned error or a panic fails the
// call (final error, post-execute skipped): it never lets the call through.
type PreExecute func(ctx context.Context, call *Call, next func() (Decision, error)) (Decision, error)

// --8<-- [start:guard]
// Guard is a veto evaluated after every pre-execute listener (and approval)
// allowed the call. It can only deny (deny=true with a reason, which may be
// empty) or abstain; the first denial ends evaluation, so no ordering of
// listeners or guards can overturn it. A panic fails the call.
type Guard func(ctx context.Context, call *Call) (reason string, deny bool)

// --8<-- [end:guard]

// Wrapper is a tools/execute wrapper around the tool body. It may pass a
// derived or replacement context to next (a timeout), call next several times
// (retry), measure it, or short-circuit with its own result. The caller's
// cancellation is always fused into the body's context, so a wrapper cannot
// detach it. A returned error or a panic becomes the final result.
type Wrapper func(ctx context.Context, call *Call, next func(ctx context.Context) (Result, error)) (Result, error)

// PostKind is the kind of a post-execute decision.
type PostKind string

// Post-execute decision kinds.
const (
	// PostAccept keeps the result, optionally replacing its content.
	PostAccept PostKind = "accept"
	// PostBlock replaces the result with a failure whose content is Feedback.
	PostBlock PostKind = "block"
)

// PostDecision is what a post-execute listener returns.
type PostDecision struct {
	// Kind is accept or block.
	Kind PostKind
	// Content, on accept, replaces the result's content when non-nil.
	Content []Block
	// Feedback, on block, is the model-facing content of the failure.
	Feedback []Block
	// ContextMessages are attributed context messages for the model's next
	// step: added to the result's (accept) or its only ones (block).
	ContextMessages []ContextMessage
}

// Accept returns an accept decision that keeps the result unchanged.
func Accept() PostDecision { return PostDecision{Kind: PostAccept} }

// PostExecute is a tools/post-execute listener. It sees a copy of the result
// (denials included) and returns accept (optionally replacing content) or
// block; next runs the inner listeners, the terminal accepts unchanged.
type PostExecute func(ctx context.Context, call *Call, res Result, next func() (PostDecision, error)) (PostDecision, error)

// ResultObserver observes the one final result of every call (tools/result).
// It gets copies; a panic is logged and ignored.
type ResultObserver func(call *Call, res Result)

// ApprovalOutcome is the answer of the approval service. Only AllowedOnce lets
// a call through.
type ApprovalOutcome string

// The four approval outcomes (VERBATIM).
const (
	// AllowedOnce grants the single asked action.
	AllowedOnce ApprovalOutcome = "allowed-once"
	// Rejected is a refusal (the user said no, or policy never).
	Rejected ApprovalOutcome = "rejected"
	// Cancelled means the request was aborted.
	Cancelled ApprovalOutcome = "cancelled"
	// Unavailable means no answerer could answer.
	Unavailable ApprovalOutcome = "unavailable"
)

// Valid reports whether o is one of the four outcomes.
func (o ApprovalOutcome) Valid() bool {
	switch o {
	case AllowedOnce, Rejected, Cancelled, Unavailable:
		return true
	}
	return false
}

// ApprovalRequest is one request to the approval service. Every answerer,
// down to the person asked, sees the call it is about: Call for an ask of
// the pipeline, Escalation for a sandbox escalation. The approval service
// logs neither (the audited events are upstream's).
type ApprovalRequest struct {
	// Agent is the requesting agent (required): its session log gets the audit events.
	Agent *Agent
	// ToolName is the tool that asks.
	ToolName string
	// CallID is the call id (optional).
	CallID string
	// Reason is the audited reason (optional; empty means absent).
	Reason string
	// DisplayReason is a user-only prompt, never persisted.
	DisplayReason *DisplayReason
	// Call is the call whose pre-execute decision asked; nil for a request
	// made from inside a tool body (a sandbox escalation). Upstream requests
	// carry no arguments; this is our addition, for an auto reviewer that
	// rates the call. The approval service never logs it.
	Call *Call
	// Escalation is what a sandbox escalation asks to approve: the call it
	// widens and how (nil for other requests). Our addition, as Call: the
	// reason alone names the mode and the justification, not the command.
	Escalation *EscalationAsk
}

// EscalationAsk is the call a sandbox escalation widens, as the person who
// approves it must see it.
type EscalationAsk struct {
	// Tool is the tool; Args the call's arguments as the model sent them
	// (bash: its command, description, ...; a file tool: its path, ...).
	Tool string
	Args json.RawMessage
	// Mode is the mode asked for; Standing the call's mode without it.
	Mode, Standing string
	// Justification is the model's sentence, untrimmed.
	Justification string
}

// Subject renders what the request is about for the person asked, in one
// line: the tool and its arguments, and for an escalation the modes and
// the justification. Empty when the request names no call.
func (r *ApprovalRequest) Subject() string {
	switch {
	case r.Escalation != nil:
		e := r.Escalation
		return fmt.Sprintf("%s %s, with sandbox %s instead of %s: %s", e.Tool, compactJSON(e.Args), e.Mode, e.Standing, e.Justification)
	case r.Call != nil:
		return r.Call.Name() + " " + compactJSON(r.Call.Args())
	}
	return ""
}

// compactJSON is raw without insignificant space ("{}" for none).
func compactJSON(raw json.RawMessage) string {
	var b bytes.Buffer
	if len(raw) == 0 || json.Compact(&b, raw) != nil {
		if len(raw) == 0 {
			return "{}"
		}
		return string(raw)
	}
	return b.String()
}

// Approver is the approval service as the pipeline and escalation use it. ctx
// is the caller's cancellation. An error (for example no open turn) fails the
// call; an outcome outside the four is treated as a bug (unreachable variant).
type Approver interface {
	Request(ctx context.Context, req ApprovalRequest) (ApprovalOutcome, error)
}

// Clone returns a deep copy of r, so a stage can never change the result
// another stage or the registry holds.
func (r Result) Clone() Result {
	c := r
	if r.Value != nil {
		c.Value = append(json.RawMessage(nil), r.Value...)
	}
	if r.Meta != nil {
		c.Meta = append(json.RawMessage(nil), r.Meta...)
	}
	if r.Sandbox != nil {
		c.Sandbox = append(json.RawMessage(nil), r.Sandbox...)
	}
	if r.Content != nil {
		c.Content = append([]Block(nil), r.Content...)
	}
	if r.Error != nil {
		e := *r.Error
		if e.Info != nil {
			i := *e.Info
			e.Info = &i
		}
		c.Error = &e
	}
	c.ContextMessages = cloneMessages(r.ContextMessages)
	return c
}

// blockMessage is error.message of a block: text blocks joined by "\n", other
// blocks as "[<type> content]", empty → the VERBATIM default.
func blockMessage(feedback []Block) string {
	parts := make([]string, 0, len(feedback))
	for _, b := range feedback {
		if b.Type == "text" {
			parts = append(parts, b.Text)
		} else {
			parts = append(parts, "["+b.Type+" content]")
		}
	}
	msg := strings.Join(parts, "\n")
	if msg == "" {
		return MsgBlockedByPost
	}
	return msg
}

func cloneMessages(ms []ContextMessage) []ContextMessage {
	if ms == nil {
		return nil
	}
	out := make([]ContextMessage, len(ms))
	for i, m := range ms {
		out[i] = m
		out[i].Texts = append([]string(nil), m.Texts...)
		out[i].Content = append([]Block(nil), m.Content...)
	}
	return out
}
