package search

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/dshsim/dshsim/pipeline"
)

// GrepName is the grep tool's name.
const GrepName = "grep"

// GrepSection is the tool:grep prompt section (order 104, VERBATIM).
const GrepSection = "Use the grep tool — not shell grep or rg — to search file contents. Use read on a matched file when you need surrounding context."

// GrepDescription is grep's description for its inline match cap.
func GrepDescription(max int) string {
	return fmt.Sprintf("Search file contents with a ripgrep regular expression. Returns matching lines with line numbers, grouped by file. Returns the first %d matches inline; a capped result reports where the complete match list was saved. Use read on a matched file for surrounding context.", max)
}

const grepParameters = `{"type":"object","properties":{"pattern":{"type":"string","description":"Regular expression to search for (ripgrep syntax)."},"path":{"type":"string","description":"File or directory to search. Defaults to the session workspace; a relative path resolves against it."},"include":{"type":"string","description":"One glob filter for which files to search (e.g. \"*.ts\", \"*.{js,jsx}\"). Not a list; negation is not supported."}},"required":["pattern"]}`

var grepOutputSchema = json.RawMessage(`{"type":"object","additionalProperties":false,"properties":{"matches":{"type":"array","items":{"type":"object","additionalProperties":false,"properties":{"path":{"type":"string"},"lineNumber":{"type":"integer"},"line":{"type":"string"}},"required":["path","lineNumber","line"]}}},"required":["matches"]}`)

func (c Config) grepTool() pipeline.Tool {
	return pipeline.Tool{
		Name: GrepName, Description: GrepDescription(c.GrepMaxMatches),
		Parameters: json.RawMessage(grepParameters), OutputSchema: grepOutputSchema, Run: c.runGrep,
	}
}

// Match is one matched line.
type Match struct {
	Path       string `json:"path"`
	LineNumber int    `json:"lineNumber"`
	Line       string `json:"line"`
}

type grepArgs struct {
	Pattern string  `json:"pattern"`
	Path    *string `json:"path"`
	Include *string `json:"include"`
}

// checkInclude refuses an include that is not one positive glob.
func checkInclude(include string) error {
	if strings.TrimSpace(include) == "" {
		return errors.New("include must be a non-empty glob when given")
	}
	if strings.HasPrefix(include, "!") {
		return errors.New(`include must be a positive glob filter; negated patterns ("!…") are not supported`)
	}
	depth := 0
	for _, ch := range include {
		switch ch {
		case '{':
			depth++
		case '}':
			depth = max(0, depth-1)
		case ',':
			if depth == 0 {
				return errors.New("include must be one glob, not a comma-separated list (use {a,b} alternation instead)")
			}
		}
	}
	return nil
}

// GrepArgv is the rg argv of one grep (without the program and
// --no-config): JSON records, the pattern and the include in --flag=value
// form, the target behind "--".
func GrepArgv(pattern string, path, include *string) []string {
	argv := []string{"--json", "--regexp=" + pattern}
	if include != nil {
		argv = append(argv, "--glob="+*include)
	}
	if path != nil {
		argv = append(argv, "--", *path)
	}
	return argv
}

func (c Config) runGrep(ctx context.Context, call *pipeline.Call) (pipeline.Output, error) {
	var a grepArgs
	if err := call.DecodeArgs(&a); err != nil {
		return pipeline.Output{}, errNotObject
	}
	if a.Pattern == "" {
		return pipeline.Output{}, errors.New("pattern must be a non-empty string")
	}
	if a.Path != nil && strings.TrimSpace(*a.Path) == "" {
		return pipeline.Output{}, errors.New("path must be a non-empty string when given")
	}
	if a.Include != nil {
		if err := checkInclude(*a.Include); err != nil {
			return pipeline.Output{}, err
		}
	}
	r, err := c.ripgrep(ctx, call, GrepName, GrepArgv(a.Pattern, a.Path, a.Include))
	if err != nil {
		return pipeline.Output{}, err
	}
	matches := []Match{}
	if !r.noMatches {
		if matches, err = ParseMatches(r.stdout); err != nil {
			return pipeline.Output{}, err
		}
		for i := range matches {
			matches[i].Path = toWorkdirRelative(matches[i].Path, r.workdir)
		}
	}
	var saved *Saved
	if len(matches) > c.GrepMaxMatches && call.Parent() == nil && c.Save != nil {
		all := c.preview(matches)
		if s, ok := c.Save(call, "grep-results.txt", fmt.Sprintf("Found %d %s\n\n%s", len(matches), noun(len(matches)), formatMatches(all))); ok {
			saved = &s
		}
	}
	kept := c.preview(matches[:min(len(matches), c.GrepMaxMatches)])
	return pipeline.Output{
		Value: marshal(struct {
			Matches []Match `json:"matches"`
		}{matches}),
		Content: []pipeline.Block{pipeline.TextBlock(RenderGrep(kept, len(matches), saved))},
		Meta:    c.grepMeta(kept, len(matches) > len(kept), len(matches)),
	}, nil
}

func (c Config) preview(ms []Match) []Match {
	out := make([]Match, len(ms))
	for i, m := range ms {
		m.Line = previewLine(m.Line, c.GrepMaxLineBytes)
		out[i] = m
	}
	return out
}

func noun(n int) string {
	if n == 1 {
		return "match"
	}
	return "matches"
}

// RenderGrep is grep's text: "No matches found", or the found-count
// header, the kept matches grouped by file, and when capped the footer.
func RenderGrep(kept []Match, seen int, saved *Saved) string {
	if seen == 0 {
		return "No matches found"
	}
	body := formatMatches(kept)
	if seen == len(kept) {
		return fmt.Sprintf("Found %d %s\n\n%s", seen, noun(seen), body)
	}
	recovery := "The complete result could not be saved; narrow pattern, path, or include to see more."
	if saved != nil {
		recovery = "Full grep result stored at: " + saved.Locator + ". " + saved.RetrievalHint
	}
	return fmt.Sprintf("Found %d of %d matches\n\n%s\n\n(%s)", len(kept), seen, body, recovery)
}

// formatMatches groups matches by file, first-seen order: the path, then
// "Line <n>: <text>" per match; files separated by a blank line.
func formatMatches(ms []Match) string {
	var order []string
	by := map[string][]Match{}
	for _, m := range ms {
		if _, ok := by[m.Path]; !ok {
			order = append(order, m.Path)
		}
		by[m.Path] = append(by[m.Path], m)
	}
	sections := make([]string, len(order))
	for i, p := range order {
		lines := []string{p}
		for _, m := range by[p] {
			lines = append(lines, fmt.Sprintf("Line %d: %s", m.LineNumber, m.Line))
		}
		sections[i] = strings.Join(lines, "\n")
	}
	return strings.Join(sections, "\n\n")
}

type fileMatches struct {
	Path    string      `json:"path"`
	Matches []lineMatch `json:"matches"`
}

type lineMatch struct {
	LineNumber int    `json:"lineNumber"`
	Line       string `json:"line"`
}

type matchesMeta struct {
	Shape     string        `json:"shape"`
	Files     []fileMatches `json:"files"`
	Truncated bool          `json:"truncated"`
	Total     int           `json:"total"`
}

func (c Config) grepMeta(kept []Match, truncated bool, total int) json.RawMessage {
	files := []fileMatches{}
	index := map[string]int{}
	for _, m := range kept {
		i, ok := index[m.Path]
		if !ok {
			i = len(files)
			index[m.Path] = i
			files = append(files, fileMatches{Path: m.Path})
		}
		files[i].Matches = append(files[i].Matches, lineMatch{m.LineNumber, m.Line})
	}
	files, forced := capMeta(files, func(items []fileMatches, t bool) bool {
		return len(marshal(matchesMeta{"matches", items, truncated || t, total})) <= c.MetaMaxBytes
	})
	return marshal(matchesMeta{"matches", files, truncated || forced, total})
}

var trailingNewlineRE = regexp.MustCompile(`\r?\n$`)

// ParseMatches reads rg --json output: the match records, in order; a line
// that is not JSON or a match without path, line number or lines fails
// SEARCH_FAILED (the raw output is an internal transport). A line that is
// not valid UTF-8 (rg sends bytes) becomes "(line is not valid UTF-8)".
func ParseMatches(stdout string) ([]Match, error) {
	var out []Match
	for _, line := range strings.Split(stdout, "\n") {
		if line == "" {
			continue
		}
		var rec struct {
			Type string          `json:"type"`
			Data json.RawMessage `json:"data"`
		}
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			return nil, malformed("a line is not JSON", err)
		}
		if rec.Type != "match" {
			continue
		}
		var d struct {
			Path *struct {
				Text *string `json:"text"`
			} `json:"path"`
			LineNumber *float64 `json:"line_number"`
			Lines      *struct {
				Text  *string `json:"text"`
				Bytes *string `json:"bytes"`
			} `json:"lines"`
		}
		if len(rec.Data) == 0 || string(rec.Data) == "null" || json.Unmarshal(rec.Data, &d) != nil {
			return nil, malformed("a match record has no data", nil)
		}
		switch {
		case d.Path == nil || d.Path.Text == nil:
			return nil, malformed("a match record has no path text", nil)
		case d.LineNumber == nil:
			return nil, malformed("a match record has no line number", nil)
		case d.Lines == nil:
			return nil, malformed("a match record has no line content", nil)
		}
		m := Match{Path: *d.Path.Text, LineNumber: int(*d.LineNumber)}
		switch {
		case d.Lines.Text != nil:
			m.Line = trailingNewlineRE.ReplaceAllString(*d.Lines.Text, "")
		case d.Lines.Bytes != nil:
			m.Line = "(line is not valid UTF-8)"
		default:
			return nil, malformed("a match record has neither line text nor bytes", nil)
		}
		out = append(out, m)
	}
	return out, nil
}

func malformed(detail string, cause error) error {
	return &pipeline.Error{Name: ErrorName, Code: CodeFailed, Message: "grep received malformed ripgrep --json output (" + detail + ")", Cause: cause}
}
