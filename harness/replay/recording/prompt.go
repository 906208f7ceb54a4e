package recording

import "strings"

// SystemPromptFile is upstream's pin of the system prompt.
const SystemPromptFile = "system-prompt.expected.md"

// Paragraphs splits the first prompt of text (the part before any
// request/header change) into paragraphs.
func Paragraphs(text string) []string {
	first, _, _ := strings.Cut(text, "<!-- request/header change")
	paragraphs := strings.Split(strings.TrimSpace(first), "\n\n")
	for i, p := range paragraphs {
		paragraphs[i] = strings.Trim(p, "\n") // a blank line more between sections
	}
	return paragraphs
}
