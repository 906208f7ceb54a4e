package delegation

import (
	"encoding/json"
	"strings"

	"github.com/dshsim/dshsim/pipeline/session"
)

// StopReason is how a child's run (or a continuable child's last turn)
// ended, in upstream's vocabulary.
type StopReason string

// Stop reasons.
const (
	StopCompleted StopReason = "completed"
	StopAborted   StopReason = "aborted"
	StopError     StopReason = "error"
	StopMaxTokens StopReason = "max-tokens"
	StopRefusal   StopReason = "refusal"
)

// StopReasonOf maps a turn/end reason kind to a stop reason as upstream's
// one-shot driver does: completed, max-tokens and aborted as they are,
// blocked (a pre-step reject) is a refusal, anything else an error. A
// continuable child's last turn maps the same way, an interrupted turn
// counting as aborted.
func StopReasonOf(kind string) StopReason {
	switch kind {
	case "completed":
		return StopCompleted
	case "max-tokens":
		return StopMaxTokens
	case "aborted", "interrupted":
		return StopAborted
	case "blocked":
		return StopRefusal
	}
	return StopError
}

// Headline is the first line of a child's abnormal end as the parent's tool
// result reads it (VERBATIM); "" for a completed run.
func Headline(r StopReason) string {
	switch r {
	case StopCompleted:
		return ""
	case StopAborted:
		return "subagent run was cancelled"
	case StopError:
		return "subagent run failed"
	case StopMaxTokens:
		return "subagent run hit its token limit before finishing"
	case StopRefusal:
		return "subagent declined the task"
	}
	return "subagent run ended abnormally (" + string(r) + ")"
}

// RunFailure is the message of a child run that did not complete: the
// headline, then "\nDiagnostic: <d>" when the provider gave one, then
// "\nPartial output before the run ended:\n<text>" when the selected output
// has text (VERBATIM; upstream's tool throws it as a plain Error).
func RunFailure(r StopReason, diagnostic string, output []json.RawMessage) string {
	msg := Headline(r)
	if diagnostic != "" {
		msg += "\nDiagnostic: " + diagnostic
	}
	if text := OutputText(output); text != "" {
		msg += "\nPartial output before the run ended:\n" + text
	}
	return msg
}

// JobDetail is the detail of a one-shot background child's job as it
// settles: "<reason>" or "<reason>; diagnostic: <d>" for a failed run
// (upstream's task outcome; "completed" carries the text instead).
func JobDetail(r StopReason, diagnostic string) string {
	if diagnostic == "" {
		return string(r)
	}
	return string(r) + "; diagnostic: " + diagnostic
}

// block is the part of a content block the selection reads.
type block struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// OutputText is the text of a child's selected output: its text blocks
// joined with "" (reasoning and tool calls dropped).
func OutputText(output []json.RawMessage) string {
	var b strings.Builder
	for _, raw := range output {
		var bl block
		if json.Unmarshal(raw, &bl) == nil && bl.Type == "text" {
			b.WriteString(bl.Text)
		}
	}
	return b.String()
}

// SelectOutput is a child's final output as upstream selects it from the
// child's own events (after any seed): the content of the last non-empty
// assistant/message (an empty one, which records usage only, does not
// replace it), else the streamed text-deltas joined as one text block, else
// nil. The blocks are kept as they are.
func SelectOutput(events []session.Event) []json.RawMessage {
	var last []json.RawMessage
	var partial strings.Builder
	for _, e := range events {
		switch e.Type {
		case session.KindAssistantMessage:
			var d struct {
				Message struct {
					Content []json.RawMessage `json:"content"`
				} `json:"message"`
			}
			if json.Unmarshal(e.Data, &d) == nil && len(d.Message.Content) > 0 {
				last = d.Message.Content
			}
		case session.KindAssistantChunk:
			var d struct {
				Chunk struct {
					Type string `json:"type"`
					Text string `json:"text"`
				} `json:"chunk"`
			}
			if json.Unmarshal(e.Data, &d) == nil && d.Chunk.Type == "text-delta" {
				partial.WriteString(d.Chunk.Text)
			}
		}
	}
	if last != nil {
		return last
	}
	if partial.Len() > 0 {
		raw, _ := json.Marshal(block{Type: "text", Text: partial.String()})
		return []json.RawMessage{raw}
	}
	return nil
}

// ForkPrefix is the seed of a forked child: the parent's events up to and
// including its last turn/end (the in-flight turn is left out), nil before
// any turn completed.
func ForkPrefix(events []session.Event) []session.Event {
	for i := len(events) - 1; i >= 0; i-- {
		if events[i].Type == session.KindTurnEnd {
			return append([]session.Event(nil), events[:i+1]...)
		}
	}
	return nil
}

// LastTurnEnd is the reason kind of the last turn/end of events ("" when
// none ended).
func LastTurnEnd(events []session.Event) string {
	e, ok := session.Last(events, session.KindTurnEnd)
	if !ok {
		return ""
	}
	var d struct {
		Reason struct {
			Kind string `json:"kind"`
		} `json:"reason"`
	}
	if json.Unmarshal(e.Data, &d) != nil {
		return ""
	}
	return d.Reason.Kind
}

// SettlementSummary is the first line of a continuable child's settlement
// notice (VERBATIM).
func SettlementSummary(childID string, r StopReason) string {
	subject := "Background subagent " + childID
	switch r {
	case StopCompleted:
		return subject + " finished and will do no further work unless you send it more."
	case StopAborted:
		return subject + " was stopped before it finished."
	case StopMaxTokens:
		return subject + " ran out of room before it finished."
	case StopRefusal:
		return subject + " declined the task."
	case StopError:
		return subject + " failed before it finished."
	}
	return subject + " ended abnormally (" + string(r) + ") before it finished."
}

// textBlock encodes one text block.
func textBlock(s string) json.RawMessage {
	raw, _ := json.Marshal(block{Type: "text", Text: s})
	return raw
}

// SettlementContent is the content of the settlement notice: the summary,
// then "It left no closing message." or "Its closing message:" followed by
// the selected output blocks as they are (VERBATIM).
func SettlementContent(summary string, output []json.RawMessage) []json.RawMessage {
	out := []json.RawMessage{textBlock(summary)}
	if output == nil {
		return append(out, textBlock("It left no closing message."))
	}
	return append(append(out, textBlock("Its closing message:")), output...)
}

// ReportContent is the content a child's report is relayed to its parent
// with: "Background subagent <id> reported:" and the reported text
// (VERBATIM).
func ReportContent(childID, output string) []json.RawMessage {
	return []json.RawMessage{textBlock("Background subagent " + childID + " reported:"), textBlock(output)}
}
