package policy

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/pipeline/approval"
	"github.com/dshsim/dshsim/pipeline/session"
	"github.com/dshsim/dshsim/sandbox"
)

// ErrRootNotAbsolute is the VERBATIM error for a workspace root that is not absolute.
var ErrRootNotAbsolute = errors.New("sandbox-policy: workspace root must be an absolute execution-world path")

// Config is the deployment configuration of the resolver.
type Config struct {
	// DefaultMode is the mode when the session has no sandbox/mode event; empty = read-only.
	DefaultMode sandbox.Mode
	// Root is the workspace root when the session header has no cwd; empty = the process cwd.
	Root string
	// Approval is the configured approval policy; empty = ask.
	Approval approval.Policy
	// NoApproval says the approval plugin is not composed: the runtime
	// context has no approval:policy section.
	NoApproval bool
}

// Resolver computes the per-call sandbox policy and the runtime-context text
// from a session log. It keeps no per-session state: every answer is folded
// from the log at the moment it is asked.
type Resolver struct {
	mode       sandbox.Mode
	root       string
	approval   approval.Policy
	noApproval bool
}

// NewResolver validates cfg: an unknown mode, an invalid approval policy or a
// non-absolute root is an error.
func NewResolver(cfg Config) (*Resolver, error) {
	r := &Resolver{mode: sandbox.ReadOnly, approval: approval.Ask, noApproval: cfg.NoApproval}
	if cfg.DefaultMode != "" {
		m, err := sandbox.ParseMode(string(cfg.DefaultMode))
		if err != nil {
			return nil, fmt.Errorf("sandbox-policy: config field defaultMode: %w", err)
		}
		r.mode = m
	}
	if cfg.Approval != "" {
		p, err := approval.ParsePolicy(string(cfg.Approval))
		if err != nil {
			return nil, fmt.Errorf("sandbox-policy: config field approval: %w", err)
		}
		r.approval = p
	}
	root := cfg.Root
	if root == "" {
		wd, err := os.Getwd()
		if err != nil {
			return nil, fmt.Errorf("sandbox-policy: workspace root: %w", err)
		}
		root = wd
	}
	root, err := cleanRoot(root)
	if err != nil {
		return nil, err
	}
	r.root = root
	return r, nil
}

// DefaultMode returns the configured default mode.
func (r *Resolver) DefaultMode() sandbox.Mode { return r.mode }

// Root returns the configured root.
func (r *Resolver) Root() string { return r.root }

// ConfiguredApproval returns the configured approval policy.
func (r *Resolver) ConfiguredApproval() approval.Policy { return r.approval }

// cleanRoot keeps the execution-world spelling (no realpath), normalised.
func cleanRoot(root string) (string, error) {
	if !filepath.IsAbs(root) {
		return "", ErrRootNotAbsolute
	}
	return filepath.Clean(root), nil
}

// SessionMode folds the log: the mode of the last sandbox/mode event. ok is
// false when there is none; an invalid mode is an error naming seq and field.
func SessionMode(events []session.Event) (m sandbox.Mode, ok bool, err error) {
	e, found := session.Last(events, session.KindSandboxMode)
	if !found {
		return "", false, nil
	}
	v, _ := session.LastField(events, session.KindSandboxMode, "mode")
	if m, err = sandbox.ParseMode(v); err != nil {
		return "", false, fmt.Errorf("session event seq %d (%s) field mode: %w", e.Seq, session.KindSandboxMode, err)
	}
	return m, true, nil
}

// --8<-- [start:resolve]
// ResolveEvents returns the policy of one call: mode = approved (when not
// empty) > last sandbox/mode > configured default; root = header cwd > the
// configured root; sessionId from the header.
func (r *Resolver) ResolveEvents(h session.Header, events []session.Event, approved sandbox.Mode) (sandbox.Policy, error) {
	p := sandbox.Policy{Mode: r.mode, WorkspaceRoot: r.root, SessionID: h.ID}
	if m, ok, err := SessionMode(events); err != nil {
		return sandbox.Policy{}, err
	} else if ok {
		p.Mode = m
	}
	if approved != "" {
		m, err := sandbox.ParseMode(string(approved))
		if err != nil {
			return sandbox.Policy{}, fmt.Errorf("sandbox-policy: approved mode: %w", err)
		}
		p.Mode = m
	}
	if h.Cwd != "" {
		root, err := cleanRoot(h.Cwd)
		if err != nil {
			return sandbox.Policy{}, err
		}
		p.WorkspaceRoot = root
	}
	return p, nil
}

// --8<-- [end:resolve]

// Resolve returns the policy of one call of agent (nil: agentless, the
// configured defaults without a session id), re-reading its session log.
// approved is the mode an escalation granted this one call, or "".
func (r *Resolver) Resolve(agent *pipeline.Agent, approved sandbox.Mode) (sandbox.Policy, error) {
	if agent == nil || agent.Session == nil {
		return r.ResolveEvents(session.Header{}, nil, approved)
	}
	events, err := agent.Session.Events()
	if err != nil {
		return sandbox.Policy{}, err
	}
	return r.ResolveEvents(agent.Session.Header(), events, approved)
}

// ApprovalPolicy folds the log: the last approval/policy, else the configured policy.
func (r *Resolver) ApprovalPolicy(events []session.Event) (approval.Policy, error) {
	p, ok, err := approval.SessionPolicy(events)
	if err != nil || ok {
		return p, err
	}
	return r.approval, nil
}

type modeEvent struct {
	Mode   sandbox.Mode `json:"mode"`
	Source string       `json:"source,omitempty"`
}

// SetSandboxMode validates mode and appends exactly one sandbox/mode {mode}.
func SetSandboxMode(log *session.Log, mode sandbox.Mode) (session.Event, error) {
	if _, err := sandbox.ParseMode(string(mode)); err != nil {
		return session.Event{}, err
	}
	return log.Append(session.KindSandboxMode, modeEvent{Mode: mode})
}
