package replay

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/dshsim/dshsim/harness/replay/recording"
	"github.com/dshsim/dshsim/stack"
)

// SystemPromptFile is upstream's pin of the system prompt.
const SystemPromptFile = "system-prompt.expected.md"

// comparePrompt checks that each tool-owned section of the stack's prompt is
// a paragraph of the recording's first system prompt, in the same order; the
// rest of the prompt (persona, other plugins' sections) is upstream's
// application's and is named as not modelled.
func comparePrompt(rec *recording.Recording, sections []stack.PromptSection) (flags, notes []string, err error) {
	data, err := os.ReadFile(filepath.Join(rec.Dir, SystemPromptFile))
	if os.IsNotExist(err) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, &recording.Error{Recording: rec.Name, File: SystemPromptFile, Problem: err.Error()}
	}
	first, _, _ := strings.Cut(string(data), "<!-- request/header change")
	paragraphs := strings.Split(strings.TrimSpace(first), "\n\n")
	for i, p := range paragraphs {
		paragraphs[i] = strings.Trim(p, "\n") // a blank line more between sections
	}
	last := -1
	var names []string
	for _, s := range sections {
		names = append(names, s.Name)
		at := slices.Index(paragraphs, s.Text)
		switch {
		case at < 0:
			flags = append(flags, fmt.Sprintf("%s: section %s (order %d) is not a paragraph of the recorded prompt: ours is %q", SystemPromptFile, s.Name, s.Order, s.Text))
		case at < last:
			flags = append(flags, fmt.Sprintf("%s: section %s (order %d) comes before an earlier section in the recorded prompt", SystemPromptFile, s.Name, s.Order))
		default:
			last = at
		}
	}
	notes = append(notes, fmt.Sprintf("%s: compared the tool sections %s; the rest of the prompt (persona, other plugins' sections) is upstream's application's, not modelled", SystemPromptFile, strings.Join(names, ", ")))
	return flags, notes, nil
}
