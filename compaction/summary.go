package compaction

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/dshsim/dshsim/internal/jsjson"
)

// The checkpoint's framing and the summary call's instruction (VERBATIM,
// upstream's dsh-compaction-basic).
const (
	SummaryOpenTag  = "<compacted-summary>"
	SummaryCloseTag = "</compacted-summary>"
	// CheckpointPreamble opens the checkpoint message that replaces the
	// compacted range.
	CheckpointPreamble = "This is an automatically generated checkpoint condensing an earlier span of the conversation to free up context. Treat the captured context as established background and build on it without restating it. Continue the task directly from the messages that follow, without acknowledging this checkpoint."
	// CheckpointPlugin is the checkpoint message's source plugin.
	CheckpointPlugin = "compact"
	// InstructionPlugin is the instruction message's source plugin.
	InstructionPlugin = "dsh-compaction-basic"
)

// Instruction is the summary call's last user message, after the
// compacted range's own messages (so the call is a prefix of the
// conversation's requests).
var Instruction = strings.Join([]string{
	"You are now acting as a compaction engine for this AI coding assistant. Condense the conversation ABOVE into a structured checkpoint that lets another model resume the work with no loss of essential context.",
	"",
	"Output EXACTLY the Markdown structure below: keep every section, in order. Use terse bullets, not prose paragraphs. Write \"(none)\" for an empty section — never drop a section.",
	"",
	"## Primary Request and Intent",
	"- [the user's original and evolving goals; quote verbatim where the exact wording matters]",
	"",
	"## Key Technical Concepts",
	"- [technologies, frameworks, patterns, and conventions in play]",
	"",
	"## Files and Code",
	"- [exact path: why it matters, key changes or snippets]",
	"",
	"## Errors and Fixes",
	"- [error: how it was resolved, plus any related user feedback]",
	"",
	"## Pending Jobs",
	"- [explicitly requested work not yet completed]",
	"",
	"## Current Work",
	"- [precisely what was in progress at this checkpoint]",
	"",
	"## Next Step",
	"- [the single next action, directly in line with the most recent request, or \"(none)\"]",
	"",
	"## Critical Context",
	"- [decisions and their rationale, constraints, user preferences, open questions, data needed to continue]",
	"",
	"Rules:",
	"- Write concise English engineering prose. Preserve exact file paths, commands, error strings, identifiers, numeric values, function signatures, and syntax fragments.",
	"- Capture user feedback and explicit instructions faithfully, especially corrections.",
	"- Do NOT mention this summarization request or that the context was compacted.",
	"- Output only the checkpoint text: do not call any tool or take any other action.",
	"- If the conversation already contains a " + SummaryOpenTag + " block, it is a PRIOR checkpoint. Do not copy it forward verbatim: preserve still-true facts, drop stale ones, and merge newer information into a single consolidated summary under the same structure.",
}, "\n")

// textBlock is a text content block.
type textBlock struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// Frame wraps summary blocks in the checkpoint's framing: the preamble
// and the open tag, the blocks, the close tag.
func Frame(summary []json.RawMessage) []json.RawMessage {
	open, _ := json.Marshal(textBlock{"text", CheckpointPreamble + "\n\n" + SummaryOpenTag})
	end, _ := json.Marshal(textBlock{"text", SummaryCloseTag})
	out := append([]json.RawMessage{open}, summary...)
	return append(out, end)
}

// Output is what the summary call streamed: its blocks in order, the
// finish kind and failure, the usage reported.
type Output struct {
	Blocks  []json.RawMessage
	Finish  string
	Failure json.RawMessage
	Usage   json.RawMessage
}

// Summary is a summary call's result, as compaction/summary records it.
type Summary struct {
	// Summary are the text blocks of the output; RawOutput all of it.
	Summary   []json.RawMessage
	RawOutput []json.RawMessage
	// Target is the route called; MaxTokens its cap.
	Target    Target
	MaxTokens int
	// Usage is the usage it reported (nil: none).
	Usage json.RawMessage
}

// CodedError is a failure with upstream's code.
type CodedError struct {
	Code    string
	Message string
}

func (e *CodedError) Error() string { return e.Message }

// SummaryOf checks a summary call's output as upstream does: an error or
// aborted finish fails with the call's failure, max-tokens with a
// truncated checkpoint (MAX_TOKENS), an image block with
// UNSUPPORTED_CONTENT, and an output without text with "no text summary
// content"; the summary is the text blocks. Pure.
func SummaryOf(out Output, target Target, maxTokens int) (Summary, error) {
	switch out.Finish {
	case "error", "aborted":
		var f struct{ Message, Code string }
		_ = json.Unmarshal(out.Failure, &f)
		return Summary{}, &CodedError{Code: f.Code, Message: f.Message}
	case "max-tokens":
		return Summary{}, &CodedError{Code: "MAX_TOKENS", Message: "summarization truncated at the token cap (incomplete checkpoint)"}
	}
	s := Summary{RawOutput: out.Blocks, Target: target, MaxTokens: maxTokens, Usage: out.Usage}
	s.Summary = []json.RawMessage{}
	hasText := false
	for _, b := range out.Blocks {
		v, err := jsjson.Parse(b)
		if err != nil {
			return Summary{}, fmt.Errorf("summary block: %w", err)
		}
		switch v.Get("type").Str() {
		case "image":
			return Summary{}, &CodedError{Code: "UNSUPPORTED_CONTENT", Message: "compaction summary cannot contain image output"}
		case "text":
			s.Summary = append(s.Summary, b)
			hasText = hasText || jsjson.Trim(v.Get("text").Str()) != ""
		}
	}
	if !hasText {
		return Summary{}, errors.New("summarization produced no text summary content")
	}
	return s, nil
}
