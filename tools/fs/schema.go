package fs

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/dshsim/dshsim/escalation"
)

// Tool descriptions (VERBATIM).
const (
	ReadDescription  = "Read a UTF-8 text file and return line-numbered content."
	WriteDescription = "Create or fully replace a UTF-8 text file."
	EditDescription  = "Edit an existing UTF-8 text file by replacing literal text."
)

// Prompt sections (VERBATIM), with their upstream order numbers 100, 101, 102.
// SectionEdit is the newer text (seed-version-deltas §4 item 6); it belongs in
// the prompt only while edit is visible.
const (
	SectionRead  = "Use the read tool — not shell commands like cat — to inspect text files. Results include line numbers. Use offset and limit to continue reading large files."
	SectionWrite = "Use the write tool to create files or completely replace file contents. Existing files are overwritten, so read an existing file first (the default fs-observation-policy requires it) and prefer edit for targeted changes."
	SectionEdit  = "Read a file before editing it (the default fs-observation-policy requires it), unless you just created or edited it in this session."
)

// Parameter descriptions (VERBATIM). OldStringDescription is the newer text
// (seed-version-deltas §4 item 6).
const (
	ReadPathDescription   = "Path to read, resolved by the filesystem backend."
	OffsetDescription     = "1-based first line to return. Defaults to 1."
	WritePathDescription  = "Path to write, resolved by the filesystem backend."
	ContentDescription    = "Full UTF-8 text content to write."
	EditPathDescription   = "Path to edit, resolved by the filesystem backend."
	OldStringDescription  = "Literal text to replace."
	NewStringDescription  = "Literal replacement text. Use an empty string to delete the match."
	ReplaceAllDescription = "Replace all matches. Defaults to false; when false, old_string must appear exactly once."
)

// LimitDescription is the VERBATIM description of read's limit for a readLimit.
func LimitDescription(limit int) string {
	return "Maximum number of lines to return. Defaults to " + strconv.Itoa(limit) + "."
}

type prop struct {
	name string
	body map[string]any
}

// objectSchema renders a JSON Schema object with properties in the given order.
func objectSchema(props []prop, required []string) json.RawMessage {
	var b bytes.Buffer
	b.WriteString(`{"type":"object","properties":{`)
	for i, p := range props {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(mustJSON(p.name))
		b.WriteByte(':')
		b.Write(mustJSON(p.body))
	}
	b.WriteString(`},"required":`)
	b.Write(mustJSON(required))
	b.WriteByte('}')
	return json.RawMessage(b.Bytes())
}

func mustJSON(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic("tools/fs: schema not encodable: " + err.Error())
	}
	return bytes.TrimRight(b.Bytes(), "\n")
}

func readSchema(limit int) json.RawMessage {
	return objectSchema([]prop{
		{"file_path", map[string]any{"type": "string", "description": ReadPathDescription}},
		{"offset", map[string]any{"type": "integer", "minimum": 1, "description": OffsetDescription}},
		{"limit", map[string]any{"type": "integer", "minimum": 1, "maximum": limit, "description": LimitDescription(limit)}},
	}, []string{"file_path"})
}

func escalationProps(advertised bool) []prop {
	if !advertised {
		return nil
	}
	p := escalation.SchemaProperties(escalation.SubjectOperation)
	return []prop{
		{"sandbox_permissions", p["sandbox_permissions"].(map[string]any)},
		{"justification", p["justification"].(map[string]any)},
	}
}

func writeSchema(advertised bool) json.RawMessage {
	return objectSchema(append([]prop{
		{"file_path", map[string]any{"type": "string", "description": WritePathDescription}},
		{"content", map[string]any{"type": "string", "description": ContentDescription}},
	}, escalationProps(advertised)...), []string{"file_path", "content"})
}

func editSchema(advertised bool) json.RawMessage {
	return objectSchema(append([]prop{
		{"file_path", map[string]any{"type": "string", "description": EditPathDescription}},
		{"old_string", map[string]any{"type": "string", "description": OldStringDescription}},
		{"new_string", map[string]any{"type": "string", "description": NewStringDescription}},
		{"replace_all", map[string]any{"type": "boolean", "description": ReplaceAllDescription}},
	}, escalationProps(advertised)...), []string{"file_path", "old_string", "new_string"})
}

// Output schemas of the canonical values (what run_code programs receive).
var (
	ReadOutputSchema = json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"},"offset":{"type":"number"},` +
		`"lines":{"type":"array","items":{"type":"object","properties":{"number":{"type":"number"},"text":{"type":"string"}},"required":["number","text"],"additionalProperties":false}},` +
		`"totalLines":{"type":"number"}},"required":["path","offset","lines","totalLines"],"additionalProperties":false}`)
	WriteOutputSchema = json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"},"operation":{"type":"string","enum":["create","update"]},` +
		`"before":{"oneOf":[{"type":"string"},{"type":"null"}]},"after":{"type":"string"}},"required":["path","operation","before","after"],"additionalProperties":false}`)
	EditOutputSchema = json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"},"before":{"type":"string"},"after":{"type":"string"}},` +
		`"required":["path","before","after"],"additionalProperties":false}`)
)
