package policy

import (
	"encoding/json"
	"strings"

	"github.com/dshsim/dshsim/internal/jsjson"
	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/pipeline/approval"
	"github.com/dshsim/dshsim/pipeline/session"
	"github.com/dshsim/dshsim/sandbox"
)

// Runtime-context framing (VERBATIM).
const (
	// SnapshotHeader prefixes every runtime-context snapshot.
	SnapshotHeader = "Current runtime context. This snapshot supersedes earlier runtime-context snapshots."
	// NoneText is sent once when a session that carried a snapshot has no context left.
	NoneText = "Current runtime context: none. Earlier runtime-context snapshots no longer apply."
	// SnapshotPlugin is the message source plugin of snapshots.
	SnapshotPlugin = "@deepseek-ai/dsh-system-prompt"
	// SandboxContextName is the section name of the sandbox sentence (order 110).
	SandboxContextName = "sandbox:policy"
)

// --8<-- [start:policy-text]
// SandboxText is the VERBATIM sandbox-policy sentence; root is rendered as a
// JSON string literal (as JavaScript's JSON.stringify writes it).
func SandboxText(mode sandbox.Mode, root string) string {
	switch mode {
	case sandbox.ReadOnly:
		return "Current DSH file policy: read-only. Any available operation enforced by the DSH file sandbox cannot modify files in the standing mode. Do not refuse a required modification from this policy alone: try an available tool normally and follow any denial and escalation guidance it returns."
	case sandbox.WorkspaceWrite:
		return "Current DSH file policy: workspace-write. Any available operation enforced by the DSH file sandbox may modify files under the session workspace: " + jsjson.Quote(root) + ". Some platform temporary areas may also be writable."
	case sandbox.DangerFullAccess:
		return "Current DSH file policy: danger-full-access. The DSH file sandbox does not restrict file modifications by available operations."
	}
	return ""
}

// --8<-- [end:policy-text]

// Section is one named runtime-context contribution.
type Section struct {
	Name string `json:"name"`
	Text string `json:"text"`
}

// Sections returns the contributions in order (sandbox 110, approval 115)
// for a policy and an approval policy.
func Sections(p sandbox.Policy, ap approval.Policy) []Section {
	return []Section{
		{Name: SandboxContextName, Text: SandboxText(p.Mode, p.WorkspaceRoot)},
		{Name: approval.ContextName, Text: approval.ContextText(ap)},
	}
}

// RenderSnapshot is the VERBATIM snapshot text: the header and the non-empty
// section texts joined by a blank line; "" when no text remains.
func RenderSnapshot(sections []Section) string {
	parts := []string{SnapshotHeader}
	for _, s := range sections {
		if s.Text != "" {
			parts = append(parts, s.Text)
		}
	}
	if len(parts) == 1 {
		return ""
	}
	return strings.Join(parts, "\n\n")
}

// SnapshotSource is the source of a snapshot user/message.
type SnapshotSource struct {
	Kind     string    `json:"kind"`
	Plugin   string    `json:"plugin"`
	Form     string    `json:"form"`
	Sections []Section `json:"sections"`
}

// SnapshotMessage is the data of a runtime-context user/message, with the
// field order of the recordings: content, source, role, id.
type SnapshotMessage = pipeline.UserMessage[SnapshotSource]

// SnapshotData renders the user/message data of a snapshot exactly as the
// recordings hold it (seq 5 of every upstream session): the text, the source
// {kind plugin, plugin @deepseek-ai/dsh-system-prompt, form snapshot,
// sections [{name,text}]} with empty sections dropped, role user and id.
func SnapshotData(sections []Section, id string) SnapshotMessage {
	kept := make([]Section, 0, len(sections))
	for _, s := range sections {
		if s.Text != "" {
			kept = append(kept, s)
		}
	}
	text := RenderSnapshot(kept)
	if text == "" {
		text = NoneText
	}
	return SnapshotMessage{
		Content: []pipeline.Block{pipeline.TextBlock(text)},
		Source:  SnapshotSource{Kind: "plugin", Plugin: SnapshotPlugin, Form: "snapshot", Sections: kept},
		Role:    "user",
		ID:      id,
	}
}

// Context folds the log into the current sections and snapshot text; extra
// sections (contributions ordered after approval:policy, such as a delegated
// child's subagent:delegation) follow in the order given.
func (r *Resolver) Context(h session.Header, events []session.Event, extra ...Section) ([]Section, string, error) {
	p, err := r.ResolveEvents(h, events, "")
	if err != nil {
		return nil, "", err
	}
	ap, err := r.ApprovalPolicy(events)
	if err != nil {
		return nil, "", err
	}
	s := Sections(p, ap)
	if r.noApproval {
		s = s[:1] // the sandbox's section alone
	}
	s = append(s, extra...)
	return s, RenderSnapshot(s), nil
}

// LastSnapshot returns the text of the last runtime-context snapshot message
// in the log; ok is false when the session never carried one.
func LastSnapshot(events []session.Event) (text string, ok bool) {
	for i := len(events) - 1; i >= 0; i-- {
		e := events[i]
		if e.Type != session.KindUserMessage {
			continue
		}
		var m SnapshotMessage
		if json.Unmarshal(e.Data, &m) != nil || m.Source.Plugin != SnapshotPlugin || m.Source.Form != "snapshot" {
			continue
		}
		var b strings.Builder
		for _, c := range m.Content {
			if c.Type == "text" {
				b.WriteString(c.Text)
			}
		}
		return b.String(), true
	}
	return "", false
}

// SyncContext is run before each request: it recomputes the snapshot from the
// log and appends it as a user/message only when its bytes differ from the
// last snapshot in the log (or, when no context remains, appends the none
// message once). extra is as for [Resolver.Context]. It returns the
// appended event, or nil.
func (r *Resolver) SyncContext(log *session.Log, extra ...Section) (*session.Event, error) {
	m, err := r.PendingContext(log, extra...)
	if err != nil || m == nil {
		return nil, err
	}
	// surfaceOp append: the model sees it, as upstream stores every message
	e, err := log.AppendWith(session.KindUserMessage, *m, session.AppendOptions{SurfaceOp: "append"})
	if err != nil {
		return nil, err
	}
	return &e, nil
}

// PendingContext is [Resolver.SyncContext] without the append: the snapshot
// message to enter, or nil when the log's last snapshot says the same (or,
// with no context left, when the none message was said or nothing ever was).
func (r *Resolver) PendingContext(log *session.Log, extra ...Section) (*SnapshotMessage, error) {
	events, err := log.Events()
	if err != nil {
		return nil, err
	}
	sections, text, err := r.Context(log.Header(), events, extra...)
	if err != nil {
		return nil, err
	}
	return pendingOf(events, sections, text), nil
}

// PendingSections is the snapshot message of sections alone (a
// composition without the sandbox-policy and approval plugins, whose
// runtime context holds only other contributions: a delegated child's
// subagent:delegation), or nil when the log's last snapshot says the same
// or, with no section, when nothing was ever said.
func PendingSections(log *session.Log, sections ...Section) (*SnapshotMessage, error) {
	events, err := log.Events()
	if err != nil {
		return nil, err
	}
	return pendingOf(events, sections, RenderSnapshot(sections)), nil
}

// pendingOf is the snapshot of sections (rendered as text) to enter after
// events, or nil when the last one said the same.
func pendingOf(events []session.Event, sections []Section, text string) *SnapshotMessage {
	last, ever := LastSnapshot(events)
	if text == "" {
		if !ever || last == NoneText {
			return nil
		}
	} else if ever && last == text {
		return nil
	}
	m := SnapshotData(sections, approval.NewUUID())
	return &m
}
