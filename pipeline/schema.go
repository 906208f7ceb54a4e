package pipeline

import (
	"bytes"
	"encoding/json"

	"github.com/dshsim/dshsim/internal/jsjson"
)

// Param is one property of a tool's parameter schema. [ObjectSchema] renders
// its keys in upstream's order (type, description, enum, items), because the
// model sees the schema as text: upstream's recordings pin it byte for byte.
type Param struct {
	// Name is the property name (unused for Items).
	Name string
	// Type is the JSON Schema type ("string", "number", "boolean", ...).
	Type string
	// Description is the model-facing description ("" leaves it out).
	Description string
	// Enum lists the allowed values (nil leaves it out).
	Enum []string
	// Items is the item schema of an array (nil leaves it out).
	Items *Param
}

// ObjectSchema renders {"type":"object","properties":{...},"required":[...]}
// with the properties in the given order, compact, without HTML escaping;
// a nil required leaves "required" out (job_list has none).
func ObjectSchema(params []Param, required []string) json.RawMessage {
	var b bytes.Buffer
	b.WriteString(`{"type":"object","properties":{`)
	for i, p := range params {
		if i > 0 {
			b.WriteByte(',')
		}
		writeJSON(&b, p.Name)
		b.WriteByte(':')
		writeParam(&b, p)
	}
	b.WriteByte('}')
	if required != nil {
		b.WriteString(`,"required":`)
		writeJSON(&b, required)
	}
	b.WriteByte('}')
	return b.Bytes()
}

func writeParam(b *bytes.Buffer, p Param) {
	b.WriteString(`{"type":`)
	writeJSON(b, p.Type)
	if p.Description != "" {
		b.WriteString(`,"description":`)
		writeJSON(b, p.Description)
	}
	if p.Enum != nil {
		b.WriteString(`,"enum":`)
		writeJSON(b, p.Enum)
	}
	if p.Items != nil {
		b.WriteString(`,"items":`)
		writeParam(b, *p.Items)
	}
	b.WriteByte('}')
}

func writeJSON(b *bytes.Buffer, v any) {
	j, _ := jsjson.Marshal(v) // strings and string slices always encode
	b.Write(j)
}
