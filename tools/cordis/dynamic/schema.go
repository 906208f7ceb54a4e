package dynamic

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
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
	// Execute and Render say whether the spec's execute and its
	// output.render are functions.
	Execute bool `json:"execute"`
	Render  bool `json:"render"`
}

// namePattern is what a dynamic tool's name may be: a model-facing
// identifier a run_code program can call as tools.<name>.
var namePattern = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,63}$`)

// propertyTypes are the parameter types a dynamic tool may declare, in
// upstream's parameter schema DSL.
var propertyTypes = []string{"string", "number", "integer", "boolean"}

// propertyKeys are the keys a parameter's spec may hold.
var propertyKeys = []string{"type", "description", "required", "enum"}

// fail is a refusal of a definition's field.
func fail(field, format string, args ...any) error {
	return fmt.Errorf("harness.defineTool %s: %s", field, fmt.Sprintf(format, args...))
}

// Check validates d and returns its parameters and output as JSON Schema:
// the name a model-facing identifier, a description (at most
// [MaxDescriptionBytes]), an execute function, the parameters an object
// of at most [MaxParameters] property specs ({type, description?,
// required?: true, enum?}, types string, number, integer or boolean, an
// enum of at most [MaxEnum] values of the type), the output {schema,
// render} with schema one of those types and render a function (as
// upstream's harness.defineTool requires). Anything else is refused,
// naming the field: a dynamic tool is code the session wrote, and a
// definition this stack cannot check is not registered.
func Check(d Definition) (params, output json.RawMessage, err error) {
	switch {
	case !namePattern.MatchString(d.Name):
		return nil, nil, fail("name", "%q is not a tool name (a letter or _, then letters, digits or _, at most 64)", d.Name)
	case d.Description == "":
		return nil, nil, fail("description", "missing or empty")
	case len(d.Description) > MaxDescriptionBytes:
		return nil, nil, fail("description", "%d bytes, more than %d", len(d.Description), MaxDescriptionBytes)
	case !d.Execute:
		return nil, nil, fail("execute", "must be a function")
	}
	if params, err = parameters(d.Parameters); err != nil {
		return nil, nil, err
	}
	if output, err = outputSchema(d.Output); err != nil {
		return nil, nil, err
	}
	if !d.Render {
		return nil, nil, fail("output.render", "must be a function")
	}
	return params, output, nil
}

// parameters converts a definition's parameters (absent: none) to the
// tool's parameter JSON Schema.
func parameters(raw json.RawMessage) (json.RawMessage, error) {
	schema := map[string]any{"type": "object", "properties": map[string]any{}}
	var required []string
	if len(raw) > 0 && !bytes.Equal(raw, []byte("null")) {
		var props map[string]map[string]json.RawMessage
		if err := json.Unmarshal(raw, &props); err != nil {
			return nil, fail("parameters", "want an object of property specs: %v", err)
		}
		if len(props) > MaxParameters {
			return nil, fail("parameters", "%d parameters, more than %d", len(props), MaxParameters)
		}
		for _, name := range sortedKeys(props) {
			p, err := property(name, props[name])
			if err != nil {
				return nil, fail("parameters."+name, "%v", err)
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
	return json.Marshal(schema)
}

// outputSchema checks a definition's output schema: one of the property
// types, and nothing else.
func outputSchema(raw json.RawMessage) (json.RawMessage, error) {
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil, fail("output.schema", "missing (output must declare { schema, render })")
	}
	var o map[string]json.RawMessage
	if err := json.Unmarshal(raw, &o); err != nil || len(o) != 1 || o["type"] == nil {
		return nil, fail("output.schema", "want {type: string, number, integer or boolean}, got %s", clip(raw))
	}
	var typ string
	if json.Unmarshal(o["type"], &typ) != nil || !slices.Contains(propertyTypes, typ) {
		return nil, fail("output.schema.type", "want string, number, integer or boolean, got %s", clip(o["type"]))
	}
	return json.Marshal(map[string]string{"type": typ})
}

// clip is raw JSON as an error quotes it: at most 120 bytes, as
// upstream's teaching errors preview a value.
func clip(raw json.RawMessage) string {
	if len(raw) > 120 {
		return string(raw[:120]) + "…"
	}
	return string(raw)
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
			return prop{}, fmt.Errorf("description: want a string, got %s", clip(raw))
		}
		if len(d) > MaxDescriptionBytes {
			return prop{}, fmt.Errorf("description: %d bytes, more than %d", len(d), MaxDescriptionBytes)
		}
		out.schema["description"] = d
	}
	if raw, ok := spec["required"]; ok {
		if !bytes.Equal(raw, []byte("true")) {
			return prop{}, fmt.Errorf("required: must be true when present, got %s", clip(raw))
		}
		out.required = true
	}
	if raw, ok := spec["enum"]; ok {
		e, err := enum(typ, raw)
		if err != nil {
			return prop{}, err
		}
		out.schema["enum"] = e
	}
	return out, nil
}

// enum checks a parameter's enum: a non-empty array of at most [MaxEnum]
// values of the parameter's type.
func enum(typ string, raw json.RawMessage) ([]json.RawMessage, error) {
	var e []json.RawMessage
	if json.Unmarshal(raw, &e) != nil || len(e) == 0 {
		return nil, fmt.Errorf("enum: want a non-empty array, got %s", clip(raw))
	}
	if len(e) > MaxEnum {
		return nil, fmt.Errorf("enum: %d values, more than %d", len(e), MaxEnum)
	}
	for i, v := range e {
		if !ofType(typ, v) {
			article := "a"
			if typ == "integer" {
				article = "an"
			}
			return nil, fmt.Errorf("enum[%d]: want %s %s, got %s", i, article, typ, clip(v))
		}
	}
	return e, nil
}

// ofType reports whether raw is a JSON value of the property type typ.
func ofType(typ string, raw json.RawMessage) bool {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return false
	}
	switch x := v.(type) {
	case string:
		return typ == "string"
	case bool:
		return typ == "boolean"
	case float64:
		return typ == "number" || typ == "integer" && math.Trunc(x) == x
	}
	return false
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
