package replay

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/dshsim/dshsim/harness/replay/projection"
	"github.com/dshsim/dshsim/harness/replay/recording"
	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/stack"
)

// ChildResult is the comparison of one recorded child session
// (session.<n>.jsonl) with the replay's child bound to it, nested in the
// result of the recording: the children of a report and of the HTML
// timeline hang under the call that started them.
type ChildResult struct {
	// Index is n; File is session.<n>.jsonl.
	Index int    `json:"index"`
	File  string `json:"file"`
	// Parent is the index of the session that started it (0: the
	// primary session); CallID the call of the parent that did.
	Parent int    `json:"parent"`
	CallID string `json:"callId,omitempty"`
	// Verdict is Match or Mismatch.
	Verdict string `json:"verdict"`
	// Comparison is its projection compared per turn.
	Comparison projection.Comparison `json:"comparison"`
	// Flags are its problems: a child never started, a header link that
	// differs, a schema or prompt section that differs.
	Flags []string `json:"flags,omitempty"`
	// Notes are informational (what of its sidecars was compared).
	Notes []string `json:"notes,omitempty"`
	// Expected and Got are the projections (normalised).
	Expected []projection.Item `json:"-"`
	Got      []projection.Item `json:"-"`
}

// compareChildren compares every recorded child with the replay's child
// bound to it, in upstream's order (n), links included: its parent, depth,
// origin and seedLength. A child of the replay bound to no recorded log is
// a flag of the recording. A child mismatching makes the recording's
// verdict a mismatch.
func (p *prepared) compareChildren(run *sessionRun, res *Result) error {
	rec := p.rec
	if run.family == nil {
		if len(rec.Children) > 0 {
			res.Flags = append(res.Flags, fmt.Sprintf("the recording has %d child session(s) but its composition delegates nothing", len(rec.Children)))
		}
		return nil
	}
	for _, m := range run.family.all() {
		if m.index == 0 && m.child != nil {
			res.Flags = append(res.Flags, fmt.Sprintf("the replay started a child (session %s) that no recorded child log stands for", m.child.Info().SessionID))
		}
	}
	for _, c := range rec.Children {
		if c.ScriptOnly {
			res.Notes = append(res.Notes, fmt.Sprintf("%s: a child's model script (llm-replay's child file, chunks only), which served our child of its creation order; not compared (upstream's suite compares none of these children's logs)", c.File))
			continue
		}
		cr, err := p.compareChild(run, c)
		if err != nil {
			return err
		}
		res.Children = append(res.Children, cr)
	}
	return nil
}

// decide is the verdict of a child session compared: a match when every
// projected event matched and nothing was flagged.
func (c *ChildResult) decide() string {
	if matched(c.Comparison, c.Flags) {
		return Match
	}
	return Mismatch
}

// expectChild is what the recording alone says of child c: its index,
// file and parent, its projection (and what of its log the projection
// covers) and, when its projection file is stale, that flag.
func expectChild(rec *recording.Recording, c *recording.Child) (*ChildResult, projection.Coverage, error) {
	cr := &ChildResult{Index: c.Index, File: c.File, Parent: parentIndex(rec, c.Header.ParentSession)}
	exp, cov, err := projection.ProjectCovered(c.Events, normalizer(rec, c.Header.Cwd, c.Header.ID))
	if err != nil {
		return nil, cov, fmt.Errorf("%s: %w", filepath.Join(rec.Name, c.File), err)
	}
	cr.Expected = exp
	if stale, err := checkProjection(rec, recording.ChildSidecar(recording.ProjectionFile, c.Index), c.File, exp); err != nil {
		return nil, cov, err
	} else if stale != "" {
		cr.Flags = append(cr.Flags, stale)
	}
	return cr, cov, nil
}

// compareChild compares recorded child c with the replay's.
func (p *prepared) compareChild(run *sessionRun, c *recording.Child) (*ChildResult, error) {
	cr, cov, err := expectChild(p.rec, c)
	if err != nil {
		return nil, err
	}
	exp := cr.Expected
	m := run.family.memberAt(c.Index)
	if m == nil || m.child == nil {
		cr.Flags = append(cr.Flags, c.File+": no child of the replay was bound to it (the replay did not start it)")
		cr.Comparison = projection.Compare(exp, nil)
		cr.Verdict = Mismatch
		return cr, nil
	}
	info := m.child.Info()
	cr.CallID = info.CallID
	got, ours, err := p.projectLog(m.child.Log().Path(), run.stack.Log().Header().Cwd, info.SessionID)
	if err != nil {
		return nil, err
	}
	cr.Notes = append(cr.Notes, coverageNotes(c.File, cov, ours)...)
	cr.Got = got
	cr.Comparison = projection.Compare(exp, got)
	cr.Flags = append(cr.Flags, linkFlags(c, m, run.family)...)
	offered, sections, serr := m.offered()
	flags, notes := compareSchemasOf(recording.ChildSidecar(recording.ToolSchemasFile, c.Index), c.ToolSchemas, offered)
	cr.Flags, cr.Notes = append(cr.Flags, flags...), append(cr.Notes, notes...)
	if c.SystemPrompt != nil {
		flags, notes := comparePromptOf(recording.ChildSidecar(recording.SystemPromptFile, c.Index), c.SystemPrompt, p.toolsMode, sections, serr)
		cr.Flags, cr.Notes = append(cr.Flags, flags...), append(cr.Notes, notes...)
	}
	cr.Verdict = cr.decide()
	return cr, nil
}

// offered is what the child's model was offered at its first request (the
// child's current view when it made none).
func (m *member) offered() ([]pipeline.Tool, []stack.PromptSection, error) {
	if m.driver != nil {
		c := &m.driver.calls
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.offered != nil {
			return c.offered, c.sections, c.sectionsErr
		}
	}
	secs, err := m.child.PromptSections()
	return m.child.WireTools(), secs, err
}

// parentIndex is the recorded index of the session whose id is id (0:
// the primary, -1: none).
func parentIndex(rec *recording.Recording, id string) int {
	if id == rec.Header.ID {
		return 0
	}
	for _, c := range rec.Children {
		if c.Header.ID == id {
			return c.Index
		}
	}
	return -1
}

// linkFlags compares the child's header links with the recorded child's:
// the session that started it, origin, delegationDepth and seedLength.
func linkFlags(c *recording.Child, m *member, f *family) []string {
	var flags []string
	h := m.child.Log().Header()
	f.mu.Lock()
	parent, ok := f.indexOf[h.ParentSession]
	f.mu.Unlock()
	want := parentIndex(f.rec, c.Header.ParentSession)
	if !ok || parent != want {
		flags = append(flags, fmt.Sprintf("%s: parentSession: the recorded child was started by %s, ours by another session", c.File, sessionName(want)))
	}
	for _, d := range []struct {
		field     string
		want, got any
	}{
		{"origin", c.Header.Origin, h.Origin},
		{"delegationDepth", c.Header.DelegationDepth, h.DelegationDepth},
		{"seedLength", c.Header.SeedLength, h.SeedLength},
	} {
		if d.want != d.got {
			flags = append(flags, fmt.Sprintf("%s: header %s: expected %v, got %v", c.File, d.field, d.want, d.got))
		}
	}
	return flags
}

// sessionName names recorded session i.
func sessionName(i int) string {
	if i == 0 {
		return recording.SessionFile
	}
	return recording.ChildFile(i)
}

// keepChildLogs reads our log of every child bound to a recorded one, for
// a refresh.
func (p *prepared) keepChildLogs(run *sessionRun, facts *runFacts) error {
	if run.family == nil {
		return nil
	}
	for _, c := range p.rec.Children {
		m := run.family.memberAt(c.Index)
		if m == nil || m.child == nil {
			return fmt.Errorf("%s: no child of the replay was bound to it, so it cannot be refreshed", c.File)
		}
		data, err := os.ReadFile(m.child.Log().Path())
		if err != nil {
			return err
		}
		facts.Children = append(facts.Children, childFacts{Index: c.Index, SessionID: m.child.Info().SessionID, Log: data})
	}
	return nil
}
