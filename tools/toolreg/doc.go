// Package toolreg is a tool as the composition root registers it: one
// value, [Tool], that carries its pipeline definition and every fact the
// stack reads about it: its system-prompt section (name, order, text), the
// rule by which a call of it yields to upstream's host (the job gate is
// pumped after such a call), whether it may run beside others
// (pipeline.Tool.ConcurrencySafe), whether it belongs to the safety stack
// (its body is never served from a recording) and what releases it.
//
// Every package under tools/ has one constructor shape,
//
//	func New(cfg Config) ([]toolreg.Tool, error)
//
// (a package with several kinds of tool has more than one such function,
// each of this shape), and package stack composes by one loop over the
// configured tools: it registers each Def, keeps the registrations, and
// reads them for the prompt sections (Stack.PromptSections), the yield
// rule (Stack.Yields) and the refusal of a served safety-stack tool
// (package served). Nothing else says what a tool is.
//
// # Use
//
//	func New(cfg Config) ([]toolreg.Tool, error) {
//		return []toolreg.Tool{{
//			Def:     pipeline.Tool{Name: "echo", Description: "...", Parameters: params, Run: run},
//			Section: &toolreg.Section{Name: "tool:echo", Order: 108, Text: "Use echo to ..."},
//			Yields:  toolreg.NoYield, // answers from memory
//		}}, nil
//	}
//
// # Imports
//
// pipeline only; never stack (which composes the tools) or harness/...
package toolreg
