package subagents

import (
	"encoding/json"
	"fmt"

	"github.com/dshsim/dshsim/pipeline/delegation"
	"github.com/dshsim/dshsim/pipeline/session"
)

// DiagnosticCorrupt is list_agents' diagnostic of a child whose log
// classifies it a subagent (origin "subagent") but holds no readable
// subagent/descriptor event: its identity cannot be folded.
const DiagnosticCorrupt = "corrupt"

// OriginSubagent is the header origin of a child session.
const OriginSubagent = "subagent"

// Adopt records a child session persisted before this runtime started (a
// cold child of a resumed session: upstream's subagent catalog reads it from
// storage). Its log at path must name a parent and the subagent origin; its
// identity folds from its first subagent/descriptor event, and a log without
// a readable one is listed as a diagnostic ([DiagnosticCorrupt]), never
// dropped. An adopted child is continuable when its descriptor says so.
func (rt *Runtime) Adopt(path string) error {
	c, err := session.Read(path)
	if err != nil {
		return err
	}
	h := c.Header
	if h.ParentSession == "" || h.Origin != OriginSubagent {
		return fmt.Errorf("%s: not a child session (parentSession %q, origin %q; want a parent and origin %q)", path, h.ParentSession, h.Origin, OriginSubagent)
	}
	r := &record{header: h, path: path}
	if d, ok := descriptorOf(c.Events); ok {
		r.descriptor, r.continuous = d, d.Mode == delegation.ModeContinuable
	} else {
		r.diagnostic = DiagnosticCorrupt
	}
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if rt.records[h.ID] != nil {
		return fmt.Errorf("%s: child session %q is already known", path, h.ID)
	}
	rt.records[h.ID] = r
	rt.order = append(rt.order, r)
	return nil
}

// descriptorOf is the first subagent/descriptor event's descriptor (false:
// none, or one that does not decode to a known mode).
func descriptorOf(events []session.Event) (delegation.Descriptor, bool) {
	for _, e := range events {
		if e.Type != session.KindSubagentDescriptor {
			continue
		}
		var d delegation.Descriptor
		if json.Unmarshal(e.Data, &d) != nil || (d.Mode != delegation.ModeContinuable && d.Mode != delegation.ModeOneShot) {
			return delegation.Descriptor{}, false
		}
		return d, true
	}
	return delegation.Descriptor{}, false
}
