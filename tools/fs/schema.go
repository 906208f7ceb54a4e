package fs

import (
	"encoding/json"
	"strconv"

	"github.com/dshsim/dshsim/escalation"
	"github.com/dshsim/dshsim/pipeline"
)

// Tool descriptions (VERBATIM).
const (
	ReadDescription  = "Read a UTF-8 text file and return line-numbered content."
	WriteDescription = "Create or fully replace a UTF-8 text file."
	EditDescription  = "Edit an existing UTF-8 text file by replacing literal text."
)

// Prompt sections (VERBATIM), with their upstream order numbers 100, 101, 102,
// as upstream's recordings pin them (system-prompt.expected.md; the newer
// upstream rewords tool:edit, but that is not what the recorded model saw). Each belongs in the prompt only while its tool is visible.
const (
	SectionRead  = "Use the read tool — not shell commands like cat — to inspect text files. Results include line numbers. Use offset and limit to continue reading large files."
	SectionWrite = "Use the write tool to create files or completely replace file contents. Existing files are overwritten, so read an existing file first (the default fs-observation-policy requires it) and prefer edit for targeted changes."
	SectionEdit  = "Use the edit tool for targeted changes to existing UTF-8 text files. It replaces literal old_string with new_string; by default old_string must appear exactly once. If old_string appears multiple times, provide a more specific old_string or set replace_all to true. Read the file first (the default fs-observation-policy requires it), unless you just created or edited it in this session."
)

// Parameter descriptions (VERBATIM, as upstream's recordings pin them in
// tool-schemas.expected.json; the newer upstream rewords old_string, but that
// is not what the recorded model saw).
const (
	ReadPathDescription   = "Path to read, resolved by the filesystem backend."
	OffsetDescription     = "1-based first line to return. Defaults to 1."
	WritePathDescription  = "Path to write, resolved by the filesystem backend."
	ContentDescription    = "Full UTF-8 text content to write."
	EditPathDescription   = "Path to edit, resolved by the filesystem backend."
	OldStringDescription  = "Literal text to replace. Must match exactly."
	NewStringDescription  = "Literal replacement text. Use an empty string to delete the match."
	ReplaceAllDescription = "Replace all matches. Defaults to false; when false, old_string must appear exactly once."
)

// LimitDescription is the VERBATIM description of read's limit for a readLimit.
func LimitDescription(limit int) string {
	return "Maximum number of lines to return. Defaults to " + strconv.Itoa(limit) + "."
}

// readSchema is upstream's: offset and limit are plain numbers (the bounds
// are checked when the call runs, not advertised).
func readSchema(limit int) json.RawMessage {
	return pipeline.ObjectSchema([]pipeline.Param{
		{Name: "file_path", Type: "string", Description: ReadPathDescription},
		{Name: "offset", Type: "number", Description: OffsetDescription},
		{Name: "limit", Type: "number", Description: LimitDescription(limit)},
	}, []string{"file_path"})
}

func escalationParams(advertised bool) []pipeline.Param {
	if !advertised {
		return nil
	}
	return escalation.SchemaParams(escalation.SubjectOperation)
}

func writeSchema(advertised bool) json.RawMessage {
	return pipeline.ObjectSchema(append([]pipeline.Param{
		{Name: "file_path", Type: "string", Description: WritePathDescription},
		{Name: "content", Type: "string", Description: ContentDescription},
	}, escalationParams(advertised)...), []string{"file_path", "content"})
}

func editSchema(advertised bool) json.RawMessage {
	return pipeline.ObjectSchema(append([]pipeline.Param{
		{Name: "file_path", Type: "string", Description: EditPathDescription},
		{Name: "old_string", Type: "string", Description: OldStringDescription},
		{Name: "new_string", Type: "string", Description: NewStringDescription},
		{Name: "replace_all", Type: "boolean", Description: ReplaceAllDescription},
	}, escalationParams(advertised)...), []string{"file_path", "old_string", "new_string"})
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
