package recording

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/dshsim/dshsim/pipeline/session"
	"github.com/dshsim/dshsim/tools/code/sdk"
)

// ToolSchemasFile is upstream's header-class pin of the tools the model sees.
const ToolSchemasFile = "tool-schemas.expected.json"

// ToolSchemas is tool-schemas.expected.json: the tools of the initial
// request/header, each kept as stored (key order matters upstream), and the
// header changes.
type ToolSchemas struct {
	// Initial are the tools of the initial header, in file order.
	Initial []ToolSchema
	// Changes are the later header changes, undecoded.
	Changes []json.RawMessage
}

// ToolSchema is one tool of the sidecar.
type ToolSchema struct {
	// Name is the tool name.
	Name string
	// Raw is the tool's JSON object as stored.
	Raw json.RawMessage
	// Line is the line of the file the tool starts on.
	Line int
}

// parseToolSchemas decodes the sidecar of recording name.
func parseToolSchemas(name string, data []byte) (*ToolSchemas, error) {
	var doc struct {
		Initial []json.RawMessage `json:"initial"`
		Changes []json.RawMessage `json:"changes"`
	}
	if err := decodeStrict(data, &doc); err != nil {
		return nil, jsonError(name, ToolSchemasFile, data, 0, err)
	}
	fail := func(line int, field, format string, args ...any) error {
		return &Error{Recording: name, File: ToolSchemasFile, Line: line, Field: field, Problem: fmt.Sprintf(format, args...)}
	}
	if doc.Initial == nil {
		return nil, fail(1, "initial", "missing")
	}
	ts := &ToolSchemas{Changes: doc.Changes}
	seen := map[string]bool{}
	off := 0
	for i, raw := range doc.Initial {
		// The tool's position in the file, for the line of an error.
		at := bytes.Index(data[off:], raw[:min(len(raw), 64)])
		line := 0
		if at >= 0 {
			line = lineAt(data, int64(off+at))
			off += at
		}
		var head struct {
			Name        *string          `json:"name"`
			Description *string          `json:"description"`
			Parameters  *json.RawMessage `json:"parameters"`
		}
		field := fmt.Sprintf("initial[%d]", i)
		if err := json.Unmarshal(raw, &head); err != nil {
			return nil, fail(line, field, "want a tool object {name, description, parameters}: %v", err)
		}
		switch {
		case head.Name == nil || *head.Name == "":
			return nil, fail(line, field+".name", "missing")
		case head.Description == nil:
			return nil, fail(line, field+".description", "missing")
		case head.Parameters == nil:
			return nil, fail(line, field+".parameters", "missing")
		case seen[*head.Name]:
			return nil, fail(line, field+".name", "tool %q listed twice", *head.Name)
		}
		seen[*head.Name] = true
		ts.Initial = append(ts.Initial, ToolSchema{Name: *head.Name, Raw: raw, Line: line})
	}
	return ts, nil
}

// runCode is the reserved transport of code mode.
const runCode = "run_code"

// ToolsMode is the tools presentation the recording shows (native, code:
// run_code alone, both: run_code beside the tools) and, when it is not read from tool-schemas.expected.json, a note
// saying how it was derived.
//
// With the sidecar: "code" when run_code is the only tool of the initial
// header, "both" when it is one of several, else "native". Without it (the
// request header's tool list is scrubbed to {{tools}} in every recording),
// the model's own top-level calls (tool/call events) decide: run_code and no
// other tool is "code" unless system-prompt.expected.md lacks code mode's
// tools:code-only line ("both"), run_code beside another tool is "both" (a
// tool the model called at top level was offered natively); no run_code call
// is "native", as before, with no note. This is the one place the mode is
// decided.
func (r *Recording) ToolsMode() (mode, note string) {
	if r.ToolSchemas != nil {
		for _, t := range r.ToolSchemas.Initial {
			if t.Name == runCode {
				if len(r.ToolSchemas.Initial) == 1 {
					return "code", ""
				}
				return "both", ""
			}
		}
		return "native", ""
	}
	var code bool
	var native []string
	for _, e := range r.Events {
		if e.Type != session.KindToolCall {
			continue
		}
		var c struct {
			Name string `json:"name"`
		}
		if json.Unmarshal(e.Data, &c) != nil {
			continue // Load has checked the event's fields
		}
		switch {
		case c.Name == runCode:
			code = true
		case !slices.Contains(native, c.Name):
			native = append(native, c.Name)
		}
	}
	switch {
	case !code:
		return "native", ""
	case len(native) == 0:
		return r.codeOrBoth()
	default:
		return "both", fmt.Sprintf("tools mode both: no %s; the model calls %s and, at top level, %s", ToolSchemasFile, runCode, strings.Join(native, ", "))
	}
}

// codeOrBoth is the tools mode of a recording without the pin whose model
// calls only run_code. Code mode and both mode offer the same run_code, so
// only the system prompt tells them apart: code mode's carries the
// tools:code-only line, a prompt without it is both mode's; without the
// prompt, code mode (the replay is the same).
func (r *Recording) codeOrBoth() (mode, note string) {
	note = fmt.Sprintf("tools mode code: no %s; the model calls %s and no other tool at top level", ToolSchemasFile, runCode)
	switch {
	case r.SystemPrompt == nil:
		return "code", note + " (both mode offers the same run_code; nothing in the recording tells them apart)"
	case slices.Contains(r.SystemPrompt, sdk.CodeOnly):
		return "code", note + "; " + SystemPromptFile + " holds the tools:code-only line"
	}
	return "both", fmt.Sprintf("tools mode both: no %s; the model calls only %s, and %s lacks code mode's tools:code-only line", ToolSchemasFile, runCode, SystemPromptFile)
}
