package replay

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/dshsim/dshsim/harness/replay/recording"
	"github.com/dshsim/dshsim/internal/jsjson"
	"github.com/dshsim/dshsim/llm"
	"github.com/dshsim/dshsim/pipeline"
)

// Upstream's session-title settings (dsh-base: fallback 5 words, 40 bytes;
// every title at most 80 bytes).
const (
	fallbackMaxWords = 5
	fallbackMaxBytes = 40
	maxTitleBytes    = 80
)

// Title event sources and the model-made title's provider (VERBATIM).
const (
	titleProviderID = "session-title-first-prompt-llm"
	titleLLMPlugin  = "dsh-session-title-llm"
)

// What upstream's title text normaliser removes: terminal escape sequences,
// control and directional characters; runs of white space become one space.
var (
	oscSequence   = regexp.MustCompile("(?:\x1b\\]|\u009d)(?s:.)*?(?:\x07|\x1b\\\\|$)")
	csiSequence   = regexp.MustCompile("(?:\x1b\\[|\u009b)[0-?]*[ -/]*[@-~]")
	escSequence   = regexp.MustCompile("\x1b[@-_]")
	controlChars  = regexp.MustCompile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\u009f]")
	directional   = regexp.MustCompile("[\u200b\u200e\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff]")
	titleSpaceRun = regexp.MustCompile(`[\s\x{00a0}\x{1680}\x{2000}-\x{200a}\x{2028}\x{2029}\x{202f}\x{205f}\x{3000}]+`)
)

// cleanTitle is upstream's title cleaning: escapes and control characters
// removed, white space runs collapsed, trimmed.
func cleanTitle(s string) string {
	for _, re := range []*regexp.Regexp{oscSequence, csiSequence, escSequence, controlChars, directional} {
		s = re.ReplaceAllString(s, "")
	}
	return jsjson.Trim(titleSpaceRun.ReplaceAllString(s, " "))
}

// truncateTitle keeps whole characters up to maxBytes UTF-8 bytes.
func truncateTitle(s string, maxBytes int) string {
	if len(s) <= maxBytes {
		return s
	}
	cut := 0
	for i, r := range s {
		if i+utf8.RuneLen(r) > maxBytes {
			break
		}
		cut = i + utf8.RuneLen(r)
	}
	return s[:cut]
}

// normalizeTitle is a title as upstream stores it: cleaned, cut to maxBytes,
// trailing space trimmed.
func normalizeTitle(s string, maxBytes int) string {
	return strings.TrimRightFunc(truncateTitle(cleanTitle(s), maxBytes), jsjson.IsSpace)
}

// fallbackTitle is upstream's fallback session title: the first message's
// first five words, at most 40 bytes.
func fallbackTitle(text string) string {
	var kept []string
	for _, w := range strings.Split(cleanTitle(text), " ") {
		if w != "" && len(kept) < fallbackMaxWords {
			kept = append(kept, w)
		}
	}
	return strings.TrimRightFunc(truncateTitle(strings.Join(kept, " "), fallbackMaxBytes), jsjson.IsSpace)
}

// titleSource is a title event's source: the fallback, or the provider
// that made it and its model's route.
type titleSource struct {
	Kind     string     `json:"kind"`
	Provider string     `json:"provider,omitempty"`
	Model    *routeData `json:"model,omitempty"`
}

type routeData struct {
	Provider string `json:"provider"`
	Model    string `json:"model"`
}

type titleData struct {
	Title       string      `json:"title"`
	MessageSeqs []int64     `json:"messageSeqs"`
	Source      titleSource `json:"source"`
}

// titleRequestData is session/title-llm-request's data, in upstream's order.
type titleRequestData struct {
	TitleProvider string        `json:"titleProvider"`
	MessageSeqs   []int64       `json:"messageSeqs"`
	Route         routeData     `json:"route"`
	System        string        `json:"system"`
	Messages      []userMessage `json:"messages"`
	MaxTokens     int           `json:"maxTokens"`
}

// titles is upstream's session-title service for one session: the fallback
// title after the first user message, and, with a title model
// (sessionTitleLlm), the model-made title of the first message, requested
// once the first request header is logged and landing after the turn.
type titles struct {
	llm     *recording.TitleLLM
	replies []recording.Reply
	titled  bool // a session/title exists
	first   *titleMessage
	pending *titleMessage // asked of the title model, not yet requested
	late    *titleData    // the model's title, logged after the turn
	notes   []string
}

// titleMessage is a user message a title is made from: its seq and text
// (text blocks joined by a newline).
type titleMessage struct {
	seq  int64
	text string
}

// userEntered notes a user message the session logged at seq; the first
// one with visible text is the title's source.
func (t *titles) userEntered(seq int64, content []pipeline.Block) {
	var parts []string
	for _, b := range content {
		if b.Type == "text" {
			parts = append(parts, b.Text)
		}
	}
	text := strings.Join(parts, "\n")
	if t.first != nil || normalizeTitle(text, 1<<30) == "" {
		return
	}
	t.first = &titleMessage{seq: seq, text: text}
	if t.llm != nil && !t.titled {
		t.pending = t.first
	}
}

// fallback returns the fallback title event due after a step's messages
// (nil: the session has a title, or no user message yet).
func (t *titles) fallback() *titleData {
	if t.titled || t.first == nil {
		return nil
	}
	t.titled = true
	return &titleData{Title: fallbackTitle(t.first.text), MessageSeqs: []int64{t.first.seq}, Source: titleSource{Kind: "fallback"}}
}

// request returns the title model's request, due once the first request
// header is logged (nil: none pending), and prepares its title for after
// the turn. A first message over maxInputBytes, or a title model without a
// usable reply, makes no title (upstream logs a warning), said in a note.
func (t *titles) request() *titleRequestData {
	m := t.pending
	t.pending = nil
	if m == nil {
		return nil
	}
	framed := "Generate the session title from this JSON array of human messages:\n" +
		fmt.Sprintf(`[{"seq":%d,"text":%s}]`, m.seq, jsjson.Quote(m.text))
	if len(framed) > t.llm.MaxInputBytes {
		t.notes = append(t.notes, fmt.Sprintf("no model-made title: the first message frames to %d bytes, over maxInputBytes %d", len(framed), t.llm.MaxInputBytes))
		return nil
	}
	route := routeData{Provider: t.llm.Provider, Model: t.llm.Model}
	req := &titleRequestData{TitleProvider: titleProviderID, MessageSeqs: []int64{m.seq}, Route: route,
		System: titleSystemPrompt(t.llm), MaxTokens: t.llm.MaxOutputTokens,
		Messages: []userMessage{newUserMessage("plugin", pluginSource{Kind: "plugin", Plugin: titleLLMPlugin}, []pipeline.Block{pipeline.TextBlock(framed)})}}
	title, problem := t.modelTitle()
	if problem != "" {
		t.notes = append(t.notes, "no model-made title: "+problem)
		return req
	}
	t.late = &titleData{Title: title, MessageSeqs: []int64{m.seq}, Source: titleSource{Kind: "provider", Provider: titleProviderID, Model: &route}}
	return req
}

// modelTitle is the title model's first reply as a title.
func (t *titles) modelTitle() (string, string) {
	if len(t.replies) == 0 {
		return "", "the title model's script (replay.override.json) is empty"
	}
	reply := t.replies[0]
	t.replies = t.replies[1:]
	a := newAssembler()
	for _, c := range reply.Chunks {
		raw, _ := json.Marshal(c)
		a.push(raw)
	}
	if reply.Throw != nil || a.finishKind() != llm.Stop {
		return "", "the title model's reply did not finish with stop"
	}
	var texts []string
	for _, b := range a.blocks() {
		switch b.Type {
		case llm.ToolCall:
			return "", "the title model's reply holds a tool call"
		case llm.Text:
			texts = append(texts, b.Text)
		}
	}
	title := normalizeTitle(normalizeTitle(strings.Join(texts, " "), 1<<30), maxTitleBytes)
	if title == "" {
		return "", "the title model produced no text"
	}
	return title, ""
}

// landed returns the model-made title once its turn ended (nil: none).
func (t *titles) landed() *titleData {
	d := t.late
	t.late = nil
	if d != nil {
		t.titled = true
	}
	return d
}

// titleSystemPrompt is the title model's system prompt (VERBATIM).
func titleSystemPrompt(c *recording.TitleLLM) string {
	return strings.Join([]string{
		"Create a concise title for an AI coding-assistant session from the supplied human messages.",
		"Return only the title on one line, **in plain text of natural language**, with no quotes, prefix, explanation, Markdown, XML, or terminal control codes. No code is allowed.",
		"Use the language of the messages.",
		fmt.Sprintf("Aim for about %d words in non-CJK languages or %d CJK characters.", c.TargetWords, c.TargetCjkCharacters),
	}, "\n")
}
