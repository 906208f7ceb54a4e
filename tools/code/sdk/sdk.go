package sdk

import (
	"regexp"
	"slices"
	"strings"
	"unicode/utf16"

	"github.com/dshsim/dshsim/internal/jsjson"
)

// CodeOnly is the VERBATIM tools:code-only section (order 99), rendered in
// code mode only.
const CodeOnly = "`run_code` is the only tool you can call directly — a tool call naming any other tool fails. Reach every tool the SDK declares below from inside the program."

// Section orders of the two system-prompt sections.
const (
	// CodeOnlyOrder is the order of the tools:code-only section.
	CodeOnlyOrder = 99
	// SectionOrder is the order of the tools:sdk section.
	SectionOrder = 150
)

// Tool is one tool a program can call, as the SDK declares it.
type Tool struct {
	// Name is the binding name (tools.<Name> or tools["<Name>"]).
	Name string
	// Description is the tool's model-facing description (the doc line).
	Description string
	// Parameters is the JSON Schema of the arguments.
	Parameters []byte
	// Output is the JSON Schema of the value a call resolves to; nil renders
	// JsonValue.
	Output []byte
}

// Section renders the tools:sdk section for tools (any order; sorted by name
// in UTF-16 code-unit order). The text ends with the closing fence, without
// a newline.
func Section(tools []Tool) string {
	sorted := slices.Clone(tools)
	slices.SortStableFunc(sorted, func(a, b Tool) int {
		return slices.Compare(utf16.Encode([]rune(a.Name)), utf16.Encode([]rune(b.Name)))
	})
	var args, outs []string
	for _, t := range sorted {
		key := Key(t.Name)
		if doc := DocLine(t.Description); doc != "" {
			args = append(args, "  "+doc)
		}
		args = append(args, "  "+key+": "+TypeOf(t.Parameters, 1)+";")
		outs = append(outs, "  "+key+": "+TypeOf(t.Output, 1)+";")
	}
	return strings.Join([]string{intro, preamble, block("ToolArgsMap", args), block("ToolOutputMap", outs), epilogue}, "\n\n")
}

func block(name string, lines []string) string {
	if len(lines) == 0 {
		return "interface " + name + " {}"
	}
	return "interface " + name + " {\n" + strings.Join(lines, "\n") + "\n}"
}

var bareKey = regexp.MustCompile(`^[A-Za-z_$][A-Za-z0-9_$]*$`)

// Key renders a property or tool name: bare when it is an identifier of
// ASCII letters, digits, _ and $, else quoted as JSON.stringify does.
func Key(name string) string {
	if bareKey.MatchString(name) {
		return name
	}
	return jsjson.Quote(name)
}

// DocLine renders a description as "/** <text> */": every run of JavaScript
// whitespace collapsed to one space, trimmed, "*/" escaped as "*\/"; "" when
// the description is empty after trimming.
func DocLine(desc string) string {
	text := strings.Join(strings.FieldsFunc(desc, jsjson.IsSpace), " ")
	if text == "" {
		return ""
	}
	return "/** " + strings.ReplaceAll(text, "*/", `*\/`) + " */"
}
