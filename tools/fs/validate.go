package fs

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/dshsim/dshsim/escalation"
	"github.com/dshsim/dshsim/pipeline"
)

// argSpec is one schema property as the generic argument check sees it.
type argSpec struct {
	name     string
	typ      string // "string", "integer" (any JSON number; integrality is the tool's check) or "boolean"
	required bool
	enum     []string
}

var (
	readArgs  = []argSpec{{"file_path", "string", true, nil}, {"offset", "integer", false, nil}, {"limit", "integer", false, nil}}
	writeArgs = []argSpec{{"file_path", "string", true, nil}, {"content", "string", true, nil}}
	editArgs  = []argSpec{{"file_path", "string", true, nil}, {"old_string", "string", true, nil},
		{"new_string", "string", true, nil}, {"replace_all", "boolean", false, nil}}
)

// escalationArgSpecs are checked only when the fields are advertised: an
// unadvertised sandbox_permissions reaches the tool, which refuses it.
func escalationArgSpecs() []argSpec {
	enum := make([]string, len(escalation.Targets))
	for i, m := range escalation.Targets {
		enum[i] = string(m)
	}
	return []argSpec{{"sandbox_permissions", "string", false, enum}, {"justification", "string", false, nil}}
}

// validateArgs is the schema-level check that runs before a tool body, as
// upstream's generic validator does: missing required properties, wrong JSON
// types and out-of-enum values, all reported at once as
// `invalid arguments: <violations joined "; ">` (ToolArgsError/INVALID_ARGS).
func validateArgs(a args, specs []argSpec) error {
	var v []string
	for _, s := range specs {
		raw, has := a[s.name]
		if !has {
			if s.required {
				v = append(v, fmt.Sprintf("missing required property %q", s.name))
			}
			continue
		}
		var val any
		_ = json.Unmarshal(raw, &val) // raw came from a decoded object: valid JSON
		switch s.typ {
		case "string":
			str, ok := val.(string)
			if !ok {
				v = append(v, fmt.Sprintf("%q must be a string", s.name))
			} else if s.enum != nil && !slices.Contains(s.enum, str) {
				list, _ := json.Marshal(s.enum)
				v = append(v, fmt.Sprintf("%q must be one of %s", s.name, list))
			}
		case "integer":
			if _, ok := val.(float64); !ok {
				v = append(v, fmt.Sprintf("%q must be a number", s.name))
			}
		case "boolean":
			if _, ok := val.(bool); !ok {
				v = append(v, fmt.Sprintf("%q must be a boolean", s.name))
			}
		}
	}
	if len(v) > 0 {
		return pipeline.InvalidArgsError(v...)
	}
	return nil
}
