package replay

import (
	"fmt"
	"slices"
	"strings"

	"github.com/dshsim/dshsim/harness/replay/recording"
	"github.com/dshsim/dshsim/stack"
	"github.com/dshsim/dshsim/tools/code/sdk"
)

// sdkDeclarations starts the declarations of the tools:sdk section: the
// text before it is the section's fixed instructions, the declarations
// describe upstream's full tool set.
const sdkDeclarations = "\n\n```ts"

// comparePrompt checks that each section the stack owns is a run of
// consecutive paragraphs of the recording's first system prompt, the
// sections in the same order (tools:sdk by its fixed instructions); the
// rest of the prompt (persona, other plugins' sections, the SDK's
// declarations) is upstream's application's and is named as not modelled.
// A tools mode whose sections cannot be rendered (sectionsErr: no runtime)
// is a flag, and so is a prompt whose tools:code-only presence contradicts
// mode (the one [recording.Recording.ToolsMode] decides). A web
// recording's pin is not compared (its suite pins the web app's own
// paragraphs, outside the tool boundary).
func comparePrompt(rec *recording.Recording, mode string, sections []stack.PromptSection, sectionsErr error) (flags, notes []string) {
	if rec.Frontend == recording.Web && rec.SystemPrompt != nil {
		return nil, []string{recording.SystemPromptFile + ": not compared: a web recording is compared at its tool boundary, and the web suite's pin holds the web app's own paragraphs (identity, checkout, GUI, persona), which are upstream's application's"}
	}
	return comparePromptOf(recording.SystemPromptFile, rec.SystemPrompt, mode, sections, sectionsErr)
}

// comparePromptOf compares sections with paragraphs, the first prompt of
// the sidecar file (nil: none).
func comparePromptOf(file string, paragraphs []string, mode string, sections []stack.PromptSection, sectionsErr error) (flags, notes []string) {
	if paragraphs == nil {
		return nil, nil
	}
	if sectionsErr != nil {
		return []string{fmt.Sprintf("%s: the stack renders no sections: %v", file, sectionsErr)}, nil
	}
	last := -1
	var names []string
	for _, s := range sections {
		names = append(names, s.Name)
		text := s.Text
		if s.Name == "tools:sdk" {
			text, _, _ = strings.Cut(text, sdkDeclarations)
		}
		at := findRun(paragraphs, recording.Paragraphs(text))
		switch {
		case at < 0:
			flags = append(flags, fmt.Sprintf("%s: section %s (order %g) is not a run of paragraphs of the recorded prompt: ours is %q", file, s.Name, s.Order, text))
		case at < last:
			flags = append(flags, fmt.Sprintf("%s: section %s (order %g) comes before an earlier section in the recorded prompt", file, s.Name, s.Order))
		default:
			last = at
		}
	}
	codeOnly := slices.Contains(names, "tools:code-only")
	switch {
	case mode == stack.ToolsCode && !codeOnly:
		flags = append(flags, file+": code mode renders no tools:code-only section")
	case mode != stack.ToolsCode && slices.Contains(paragraphs, sdk.CodeOnly):
		flags = append(flags, fmt.Sprintf("%s: the recorded prompt holds the tools:code-only line, but the recording's tool list shows %s mode", file, mode))
	}
	note := fmt.Sprintf("%s: compared the sections %s; the rest of the prompt (persona, other plugins' sections) is upstream's application's, not modelled", file, strings.Join(names, ", "))
	if slices.Contains(names, "tools:sdk") {
		note += "; the SDK's declarations describe upstream's full tool set (not compared)"
	}
	return flags, append(notes, note)
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
