package recording

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// The request/header pins of upstream's snapshot tests (optional files).
const (
	ToolSchemasFile  = "tool-schemas.expected.json"
	SystemPromptFile = "system-prompt.expected.md"
)

// WireTool is one tool of the recorded wire list.
type WireTool struct {
	// Name, Description and Parameters are the tool as the model got it.
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}

// ToolSchemas is tool-schemas.expected.json: the wire tools of the first
// request and the changes after it.
type ToolSchemas struct {
	// Initial are the tools of the first request, in the order sent.
	Initial []WireTool `json:"initial"`
	// Changes are later tool-list changes (kept, not interpreted).
	Changes []json.RawMessage `json:"changes"`
}

// Tool returns the initial wire tool named name.
func (t *ToolSchemas) Tool(name string) (WireTool, bool) {
	for _, w := range t.Initial {
		if w.Name == name {
			return w, true
		}
	}
	return WireTool{}, false
}

// runCode is the reserved transport of code mode.
const runCode = "run_code"

// ToolsMode is the tools presentation the recording shows (code-mode.md
// §1.1): "code" when run_code is the only wire tool, "both" when it is one
// of several, else "native" (also without the pin).
func (r *Recording) ToolsMode() string {
	if r.ToolSchemas == nil {
		return "native"
	}
	if _, ok := r.ToolSchemas.Tool(runCode); !ok {
		return "native"
	}
	if len(r.ToolSchemas.Initial) == 1 {
		return "code"
	}
	return "both"
}

// loadPins reads the optional pins; a bad tool-schemas file is an [*Error]
// naming the file, line and field.
func loadPins(r *Recording) error {
	data, err := os.ReadFile(filepath.Join(r.Dir, ToolSchemasFile))
	switch {
	case err == nil:
		var ts ToolSchemas
		if err := decodeStrict(data, &ts); err != nil {
			return jsonError(r.Name, ToolSchemasFile, data, 0, err)
		}
		if ts.Initial == nil {
			return &Error{Recording: r.Name, File: ToolSchemasFile, Field: "initial", Problem: "missing"}
		}
		for i, w := range ts.Initial {
			if w.Name == "" {
				return &Error{Recording: r.Name, File: ToolSchemasFile, Line: lineOfKey(data, "name"), Field: fmt.Sprintf("initial[%d].name", i), Problem: "missing"}
			}
			if !json.Valid(w.Parameters) {
				return &Error{Recording: r.Name, File: ToolSchemasFile, Line: lineOfValue(data, w.Name), Field: fmt.Sprintf("initial[%d].parameters", i), Problem: "missing or not JSON"}
			}
		}
		r.ToolSchemas = &ts
	case !errors.Is(err, fs.ErrNotExist):
		return &Error{Recording: r.Name, File: ToolSchemasFile, Problem: err.Error()}
	}
	data, err = os.ReadFile(filepath.Join(r.Dir, SystemPromptFile))
	switch {
	case err == nil:
		r.SystemPrompt, r.HasSystemPrompt = string(data), true
	case !errors.Is(err, fs.ErrNotExist):
		return &Error{Recording: r.Name, File: SystemPromptFile, Problem: err.Error()}
	}
	return nil
}
