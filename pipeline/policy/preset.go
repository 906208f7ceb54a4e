package policy

import (
	"fmt"

	"github.com/dshsim/dshsim/pipeline/approval"
	"github.com/dshsim/dshsim/pipeline/session"
	"github.com/dshsim/dshsim/sandbox"
)

// Preset is a named pair of knob values.
type Preset struct {
	// Name is the preset key.
	Name string
	// Sandbox is the sandbox mode it selects.
	Sandbox sandbox.Mode
	// Approval is the approval policy it selects.
	Approval approval.Policy
}

// --8<-- [start:presets]
// Presets is the bundle table (VERBATIM values), in table order.
var Presets = []Preset{
	{Name: "read-only", Sandbox: sandbox.ReadOnly, Approval: approval.Ask},
	{Name: "workspace-write", Sandbox: sandbox.WorkspaceWrite, Approval: approval.Ask},
	{Name: "danger-full-access", Sandbox: sandbox.DangerFullAccess, Approval: approval.Never},
}

// --8<-- [end:presets]

// Custom is the derived name of knob values that match no preset; it is never
// a switch target nor an event payload.
const Custom = "custom"

// LookupPreset returns the preset named name.
func LookupPreset(name string) (Preset, bool) {
	for _, p := range Presets {
		if p.Name == name {
			return p, true
		}
	}
	return Preset{}, false
}

// Knobs are the effective knob values of a session.
type Knobs struct {
	Sandbox  sandbox.Mode
	Approval approval.Policy
}

// Knobs folds the log: last sandbox/mode ?? default; last approval/policy ?? config.
func (r *Resolver) Knobs(events []session.Event) (Knobs, error) {
	k := Knobs{Sandbox: r.mode}
	if m, ok, err := SessionMode(events); err != nil {
		return Knobs{}, err
	} else if ok {
		k.Sandbox = m
	}
	p, err := r.ApprovalPolicy(events)
	if err != nil {
		return Knobs{}, err
	}
	k.Approval = p
	return k, nil
}

// DerivePreset names the preset the knobs match: the last permission/preset
// when its values match (tie-break), else the first match in table order, else custom.
func DerivePreset(k Knobs, events []session.Event) string {
	if name, ok := session.LastField(events, session.KindPermissionPreset, "preset"); ok {
		if p, ok := LookupPreset(name); ok && p.Sandbox == k.Sandbox && p.Approval == k.Approval {
			return p.Name
		}
	}
	for _, p := range Presets {
		if p.Sandbox == k.Sandbox && p.Approval == k.Approval {
			return p.Name
		}
	}
	return Custom
}

// CurrentPreset derives the preset of the session log.
func (r *Resolver) CurrentPreset(log *session.Log) (string, error) {
	events, err := log.Events()
	if err != nil {
		return "", err
	}
	k, err := r.Knobs(events)
	if err != nil {
		return "", err
	}
	return DerivePreset(k, events), nil
}

type presetEvent struct {
	Preset string `json:"preset"`
}

// SwitchPreset switches the session to preset name as a user would: it
// appends permission/preset only if the derived preset differs, sandbox/mode
// only if the mode differs, and the approval policy only if it differs. With
// a service the approval switch is the live one (it also injects the change
// notice); with nil it appends approval/policy silently. It returns the
// appended events.
func (r *Resolver) SwitchPreset(log *session.Log, name string, svc *approval.Service) ([]session.Event, error) {
	target, events, err := presetAndEvents(log, name)
	if err != nil {
		return nil, err
	}
	k, err := r.Knobs(events)
	if err != nil {
		return nil, err
	}
	var out []session.Event
	if DerivePreset(k, events) != target.Name {
		e, err := log.Append(session.KindPermissionPreset, presetEvent{Preset: target.Name})
		if err != nil {
			return out, err
		}
		out = append(out, e)
	}
	if k.Sandbox != target.Sandbox {
		e, err := SetSandboxMode(log, target.Sandbox)
		if err != nil {
			return out, err
		}
		out = append(out, e)
	}
	if k.Approval != target.Approval {
		if svc != nil {
			es, err := svc.SetPolicy(log, target.Approval)
			out = append(out, es...)
			if err != nil {
				return out, err
			}
		} else {
			e, err := approval.SetSessionPolicy(log, target.Approval)
			if err != nil {
				return out, err
			}
			out = append(out, e)
		}
	}
	return out, nil
}

// presetAndEvents looks up preset name and reads the log's events.
func presetAndEvents(log *session.Log, name string) (Preset, []session.Event, error) {
	target, ok := LookupPreset(name)
	if !ok {
		return Preset{}, nil, fmt.Errorf("permission preset %q is not a preset (want read-only, workspace-write or danger-full-access)", name)
	}
	events, err := log.Events()
	return target, events, err
}

// SeedSession gives a fresh session the facts of the default preset: it
// appends permission/preset, sandbox/mode and approval/policy, each only when
// the log has no event of that type yet (a seeded or partial session only
// gains the missing facts). It returns the appended events.
func (r *Resolver) SeedSession(log *session.Log, name string) ([]session.Event, error) {
	target, events, err := presetAndEvents(log, name)
	if err != nil {
		return nil, err
	}
	var out []session.Event
	appendIfMissing := func(typ string, data any) error {
		if _, found := session.Last(events, typ); found {
			return nil
		}
		e, err := log.Append(typ, data)
		if err == nil {
			out = append(out, e)
		}
		return err
	}
	if err := appendIfMissing(session.KindPermissionPreset, presetEvent{Preset: target.Name}); err != nil {
		return out, err
	}
	if err := appendIfMissing(session.KindSandboxMode, modeEvent{Mode: target.Sandbox}); err != nil {
		return out, err
	}
	if err := appendIfMissing(session.KindApprovalPolicy, map[string]string{"policy": string(target.Approval)}); err != nil {
		return out, err
	}
	return out, nil
}
