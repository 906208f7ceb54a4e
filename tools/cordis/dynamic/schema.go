package dynamic

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
)

// Definition is one tool a dynamic package's host code registers
// (harness.registerTool(ctx, harness.defineTool(spec))), as the host
// code's evaluation returns it.
type Definition struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
	Output      json.RawMessage `json:"output"`
}

// namePattern is what a dynamic tool's name may be: a model-facing
// identifier a run_code program can call as tools.<name>.
var namePattern = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,63}$`)

// propertyTypes are the parameter types a dynamic tool may declare, in
// upstream's parameter schema DSL.
var propertyTypes = []string{"string", "number", "integer", "boolean"}

// propertyKeys are the keys a parameter's spec may hold.
var propertyKeys = []string{"type", "description", "required", "enum"}

// Check validates d and returns its parameters and output as JSON Schema:
// the name a model-facing identifier, a description, the parameters an
// object of property specs ({type, description?, required?: true, enum?},
// types string, number, integer or boolean), the output schema (when
// given) one of those types. Anything else is refused, naming the field:
// a dynamic tool is code the session wrote, and a definition this stack
// cannot check is not registered.
func Check(d Definition) (params, output json.RawMessage, err error) {
	fail := func(field, format string, args ...any) error {
		return fmt.Errorf("harness.defineTool %s: %s", field, fmt.Sprintf(format, args...))
	}
	switch {
	case !namePattern.MatchString(d.Name):
		return nil, nil, fail("name", "%q is not a tool name (a letter or _, then letters, digits or _, at most 64)", d.Name)
	case d.Description == "":
		return nil, nil, fail("description", "missing or empty")
	}
	schema := map[string]any{"type": "object", "properties": map[string]any{}}
	var required []string
	if len(d.Parameters) > 0 && !bytes.Equal(d.Parameters, []byte("null")) {
		var props map[string]map[string]json.RawMessage
		if err := json.Unmarshal(d.Parameters, &props); err != nil {
			return nil, nil, fail("parameters", "want an object of property specs: %v", err)
		}
		for _, name := range sortedKeys(props) {
			p, err := property(name, props[name])
			if err != nil {
				return nil, nil, fail("parameters."+name, "%v", err)
			}
			schema["properties"].(map[string]any)[name] = p.schema
			if p.required {
				required = append(required, name)
			}
		}
	}
	if required != nil {
		schema["required"] = required
	}
	params, _ = json.Marshal(schema)
	if len(d.Output) > 0 && !bytes.Equal(d.Output, []byte("null")) {
		var o map[string]json.RawMessage
		if err := json.Unmarshal(d.Output, &o); err != nil || len(o) != 1 || o["type"] == nil {
			return nil, nil, fail("output.schema", "want {type: string, number, integer or boolean}, got %s", d.Output)
		}
		var typ string
		if json.Unmarshal(o["type"], &typ) != nil || !slices.Contains(propertyTypes, typ) {
			return nil, nil, fail("output.schema.type", "want string, number, integer or boolean, got %s", o["type"])
		}
		output, _ = json.Marshal(map[string]string{"type": typ})
	}
	return params, output, nil
}

// prop is one parameter's JSON Schema and whether it is required.
type prop struct {
	schema   map[string]any
	required bool
}

// property converts one parameter's spec.
func property(name string, spec map[string]json.RawMessage) (prop, error) {
	if !namePattern.MatchString(name) {
		return prop{}, fmt.Errorf("%q is not a parameter name", name)
	}
	for k := range spec {
		if !slices.Contains(propertyKeys, k) {
			return prop{}, fmt.Errorf("key %q is not supported (a parameter holds type, description, required, enum)", k)
		}
	}
	var typ string
	if json.Unmarshal(spec["type"], &typ) != nil || !slices.Contains(propertyTypes, typ) {
		return prop{}, fmt.Errorf("type: want string, number, integer or boolean, got %s", orMissing(spec["type"]))
	}
	out := prop{schema: map[string]any{"type": typ}}
	if raw, ok := spec["description"]; ok {
		var d string
		if json.Unmarshal(raw, &d) != nil {
			return prop{}, fmt.Errorf("description: want a string, got %s", raw)
		}
		out.schema["description"] = d
	}
	if raw, ok := spec["required"]; ok {
		if !bytes.Equal(raw, []byte("true")) {
			return prop{}, fmt.Errorf("required: must be true when present, got %s", raw)
		}
		out.required = true
	}
	if raw, ok := spec["enum"]; ok {
		var e []any
		if json.Unmarshal(raw, &e) != nil || len(e) == 0 {
			return prop{}, fmt.Errorf("enum: want a non-empty array, got %s", raw)
		}
		out.schema["enum"] = e
	}
	return out, nil
}

func orMissing(raw json.RawMessage) string {
	if raw == nil {
		return "nothing"
	}
	return string(raw)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
