package replay

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/dshsim/dshsim/harness/replay/recording"
	"github.com/dshsim/dshsim/stack"
	"github.com/dshsim/dshsim/tools/code/sdk"
)

// SystemPromptFile is upstream's pin of the system prompt.
const SystemPromptFile = "system-prompt.expected.md"

// sdkDeclarations starts the declarations of the tools:sdk section: the
// text before it is the section's fixed instructions, the declarations
// describe upstream's full tool set.
const sdkDeclarations = "\n\n```ts"

// toolsMode is the tools mode to replay rec in, and a note when it is
// derived rather than read from tool-schemas.expected.json
// ([recording.Recording.ToolsMode]). A model that calls only run_code is
// code mode unless the recording's system-prompt.expected.md is there
// without code mode's tools:code-only line: then both (the recordings'
// both-mode-turn); the two offer the same run_code.
func toolsMode(rec *recording.Recording) (mode, note string) {
	mode, note = rec.ToolsMode()
	if mode != stack.ToolsCode || note == "" {
		return mode, note
	}
	data, err := os.ReadFile(filepath.Join(rec.Dir, SystemPromptFile))
	switch {
	case err != nil:
		return mode, note + " (both mode offers the same run_code; nothing in the recording tells them apart)"
	case slices.Contains(promptParagraphs(string(data)), sdk.CodeOnly):
		return mode, note + "; " + SystemPromptFile + " holds the tools:code-only line"
	default:
		return stack.ToolsBoth, fmt.Sprintf("tools mode both: no %s; the model calls only run_code, and %s lacks code mode's tools:code-only line", recording.ToolSchemasFile, SystemPromptFile)
	}
}

// comparePrompt checks that each section the stack owns is a run of
// consecutive paragraphs of the recording's first system prompt, the
// sections in the same order (tools:sdk by its fixed instructions); the
// rest of the prompt (persona, other plugins' sections, the SDK's
// declarations) is upstream's application's and is named as not modelled.
// A tools mode whose sections cannot be rendered (sectionsErr: no runtime)
// is a flag, and so is a prompt whose tools:code-only presence contradicts
// mode (the one [toolsMode] reads from the recording).
func comparePrompt(rec *recording.Recording, mode string, sections []stack.PromptSection, sectionsErr error) (flags, notes []string, err error) {
	data, err := os.ReadFile(filepath.Join(rec.Dir, SystemPromptFile))
	if os.IsNotExist(err) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, &recording.Error{Recording: rec.Name, File: SystemPromptFile, Problem: err.Error()}
	}
	if sectionsErr != nil {
		return []string{fmt.Sprintf("%s: the stack renders no sections: %v", SystemPromptFile, sectionsErr)}, nil, nil
	}
	paragraphs := promptParagraphs(string(data))
	last := -1
	var names []string
	for _, s := range sections {
		names = append(names, s.Name)
		text := s.Text
		if s.Name == "tools:sdk" {
			text, _, _ = strings.Cut(text, sdkDeclarations)
		}
		at := findRun(paragraphs, promptParagraphs(text))
		switch {
		case at < 0:
			flags = append(flags, fmt.Sprintf("%s: section %s (order %d) is not a run of paragraphs of the recorded prompt: ours is %q", SystemPromptFile, s.Name, s.Order, text))
		case at < last:
			flags = append(flags, fmt.Sprintf("%s: section %s (order %d) comes before an earlier section in the recorded prompt", SystemPromptFile, s.Name, s.Order))
		default:
			last = at
		}
	}
	codeOnly := slices.Contains(names, "tools:code-only")
	switch {
	case mode == stack.ToolsCode && !codeOnly:
		flags = append(flags, SystemPromptFile+": code mode renders no tools:code-only section")
	case mode != stack.ToolsCode && slices.Contains(paragraphs, sdk.CodeOnly):
		flags = append(flags, fmt.Sprintf("%s: the recorded prompt holds the tools:code-only line, but the recording's tool list shows %s mode", SystemPromptFile, mode))
	}
	note := fmt.Sprintf("%s: compared the sections %s; the rest of the prompt (persona, other plugins' sections) is upstream's application's, not modelled", SystemPromptFile, strings.Join(names, ", "))
	if slices.Contains(names, "tools:sdk") {
		note += "; the SDK's declarations describe upstream's full tool set (not compared)"
	}
	return flags, append(notes, note), nil
}

// promptParagraphs splits the first prompt of text (the part before any
// request/header change) into paragraphs.
func promptParagraphs(text string) []string {
	first, _, _ := strings.Cut(text, "<!-- request/header change")
	paragraphs := strings.Split(strings.TrimSpace(first), "\n\n")
	for i, p := range paragraphs {
		paragraphs[i] = strings.Trim(p, "\n") // a blank line more between sections
	}
	return paragraphs
}

// findRun returns the index of the first paragraph of the first place run
// appears in paragraphs as consecutive paragraphs, or -1.
func findRun(paragraphs, run []string) int {
	for i := 0; i+len(run) <= len(paragraphs); i++ {
		if slices.Equal(paragraphs[i:i+len(run)], run) {
			return i
		}
	}
	return -1
}
