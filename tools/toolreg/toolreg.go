package toolreg

import (
	"encoding/json"

	"github.com/dshsim/dshsim/pipeline"
)

// Section is one tool-owned section of the system prompt.
type Section struct {
	// Name is e.g. "tool:bash"; Order is upstream's order number (sections
	// sort by it; equal orders keep the registration order).
	Name  string
	Order float64
	// Text is the VERBATIM section text.
	Text string
}

// Tool is one tool's registration: its definition and every fact about it.
type Tool struct {
	// Def is the pipeline definition: name, description, schemas, body and
	// ConcurrencySafe (whether consecutive calls may run in one pool).
	Def pipeline.Tool
	// Section is the tool's prompt section, in an agent's prompt while the
	// agent sees the tool (nil: none).
	Section *Section
	// SectionsFor computes sections from the tools an agent sees, for every
	// agent of the composition (run_code's mode sections, whose SDK declares
	// the visible tools); its error fails the prompt assembly. Nil: none.
	SectionsFor func(visible []pipeline.Tool) ([]Section, error)
	// Yields reports whether a call with args awaits I/O in upstream's host,
	// so that the host observes its background jobs meanwhile; nil: every
	// call does (the tool reads files, runs a process or asks someone).
	Yields func(args json.RawMessage) bool
	// SafetyStack marks a tool of the safety stack: a recording can never
	// serve its body (package served refuses it).
	SafetyStack bool
	// Unhosted says the real body cannot run here (it needs upstream's
	// Cordis host, or a PowerShell this machine lacks): a composition that
	// serves bodies from a recording serves this one always.
	Unhosted bool
	// Close releases what the tool holds (nil: nothing); the composition
	// calls it when it is closed, in reverse order of construction.
	Close func() error
}

// Name is the tool's model-facing name.
func (t Tool) Name() string { return t.Def.Name }

// Yield applies the yield rule to a call with args.
func (t Tool) Yield(args json.RawMessage) bool { return t.Yields == nil || t.Yields(args) }

// NoYield is the rule of a tool that answers from memory: no call yields.
func NoYield(json.RawMessage) bool { return false }

// Defs returns the definitions of ts, in order.
func Defs(ts ...Tool) []pipeline.Tool {
	out := make([]pipeline.Tool, len(ts))
	for i, t := range ts {
		out[i] = t.Def
	}
	return out
}

// Constructor makes registrations: one line of a composition, a package's
// New bound to its configuration ([Bind]).
type Constructor func() ([]Tool, error)

// Bind binds a package's New to cfg.
func Bind[C any](newTools func(C) ([]Tool, error), cfg C) Constructor {
	return func() ([]Tool, error) { return newTools(cfg) }
}
