package recording

import (
	"bytes"
	"encoding/json"
	"fmt"
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

// ToolsMode is the tools presentation the recording shows (code-mode.md
// §1.1): "code" when run_code is the only tool of the initial header,
// "both" when it is one of several, else "native" (also without the
// sidecar).
func (r *Recording) ToolsMode() string {
	if r.ToolSchemas == nil {
		return "native"
	}
	for _, t := range r.ToolSchemas.Initial {
		if t.Name == runCode {
			if len(r.ToolSchemas.Initial) == 1 {
				return "code"
			}
			return "both"
		}
	}
	return "native"
}
