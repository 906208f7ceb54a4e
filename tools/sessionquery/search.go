package sessionquery

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/pipeline/session"
)

// Surfaces of an event.
const (
	SurfaceCurrent  = "current"
	SurfaceShadowed = "shadowed"
	SurfaceLogOnly  = "log-only"
)

// snippetRunes is how much text around a match a snippet shows on each side.
const snippetRunes = 40

func invalidFilter(msg string) error { return pipeline.NewError(nameQuery, CodeInvalidFilter, msg) }

// filter is a decoded search request.
type filter struct {
	query            string
	seqFrom, seqTo   *int64
	timeFrom, timeTo *int64
	types, surfaces  []string
}

func decodeFilter(raw map[string]json.RawMessage) (filter, error) {
	var f filter
	var q string
	if v, ok := raw["query"]; !ok || json.Unmarshal(v, &q) != nil {
		return f, pipeline.NewError(nameQuery, CodeInvalidQuery, "session-search query must contain non-whitespace text")
	}
	f.query = strings.Join(strings.Fields(q), " ")
	switch {
	case f.query == "":
		return f, pipeline.NewError(nameQuery, CodeInvalidQuery, "session-search query must contain non-whitespace text")
	case strings.ContainsRune(f.query, 0):
		return f, pipeline.NewError(nameQuery, CodeInvalidQuery, "session-search query must not contain NUL")
	}
	for _, b := range []struct {
		key string
		dst **int64
	}{{"seq_from", &f.seqFrom}, {"seq_to", &f.seqTo}} {
		n, ok, err := safeInt(raw, b.key)
		if err != nil {
			return f, err
		}
		if ok {
			*b.dst = &n
		}
	}
	for _, b := range []struct {
		key string
		dst **int64
	}{{"time_from", &f.timeFrom}, {"time_to", &f.timeTo}} {
		v, ok := raw[b.key]
		if !ok || string(v) == "null" {
			continue
		}
		var s string
		var t time.Time
		err := json.Unmarshal(v, &s)
		if err == nil {
			t, err = time.Parse(time.RFC3339Nano, s)
		}
		if err != nil {
			return f, invalidFilter(b.key + " must be a timezone-qualified ISO 8601 time")
		}
		ms := t.UnixMilli()
		*b.dst = &ms
	}
	for _, b := range []struct {
		key string
		dst *[]string
	}{{"event_types", &f.types}, {"surfaces", &f.surfaces}} {
		v, ok := raw[b.key]
		if !ok || string(v) == "null" {
			continue
		}
		if err := json.Unmarshal(v, b.dst); err != nil {
			return f, invalidFilter(b.key + " must be an array of strings")
		}
	}
	for _, s := range f.surfaces {
		if s != SurfaceCurrent && s != SurfaceShadowed && s != SurfaceLogOnly {
			return f, invalidFilter("surfaces must hold only current, shadowed or log-only")
		}
	}
	return f, nil
}

// surface classifies an event: message and result events the model sees
// are current (a replaced one would be shadowed; this log never replaces),
// every other event is log-only.
func surface(e session.Event) string {
	if len(e.SurfaceOp) > 0 {
		return SurfaceCurrent
	}
	return SurfaceLogOnly
}

func (cfg Config) search(_ context.Context, call *pipeline.Call) (pipeline.Output, error) {
	raw, err := decode(call)
	if err != nil {
		return pipeline.Output{}, err
	}
	f, err := decodeFilter(raw)
	if err != nil {
		return pipeline.Output{}, err
	}
	l, err := cfg.target(call, raw)
	if err != nil {
		return pipeline.Output{}, err
	}
	events, err := l.Events()
	if err != nil {
		return pipeline.Output{}, pipeline.NewError(nameHarness, "SESSION_QUERY_TOOL_FAILED", "session query operation failed")
	}
	limit := int64(-1)
	if l == call.Agent().Session {
		// the current session: nothing from the step performing this call
		if e, ok := session.Last(events, "step/start"); ok {
			limit = e.Seq - 1
		}
	}
	var b strings.Builder
	b.WriteString(heading(l, events))
	var hits []string
	capped := false
	for _, e := range events {
		if limit >= 0 && e.Seq > limit || !f.admits(e) {
			continue
		}
		text := searchText(e)
		at, end := indexFold(text, f.query)
		if at < 0 {
			continue
		}
		if len(hits) == cfg.MaxSearchResults {
			capped = true
			break
		}
		hits = append(hits, fmt.Sprintf("%d. seq %d | %s | %s | %s\n   Snippet: %s", len(hits)+1, e.Seq, e.Type, surface(e), isoTime(e.Time), snippet(text, at, end)))
	}
	if len(hits) == 0 {
		b.WriteString("\n\nNo prior event matches found.")
		return textOutput(b.String()), nil
	}
	fmt.Fprintf(&b, "\n\nEvent search results (%d):\n%s", len(hits), strings.Join(hits, "\n"))
	if capped {
		b.WriteString("\n\nResult cap reached. Narrow the query or add filters to find additional matches.")
	}
	return textOutput(b.String()), nil
}

func (f filter) admits(e session.Event) bool {
	switch {
	case f.seqFrom != nil && e.Seq < *f.seqFrom, f.seqTo != nil && e.Seq > *f.seqTo:
		return false
	case f.timeFrom != nil && e.Time < *f.timeFrom, f.timeTo != nil && e.Time > *f.timeTo:
		return false
	case len(f.types) > 0 && !slices.Contains(f.types, e.Type):
		return false
	case len(f.surfaces) > 0 && !slices.Contains(f.surfaces, surface(e)):
		return false
	}
	return true
}

// searchText is what a search looks in: the event's semantic text, else its
// data as stored.
func searchText(e session.Event) string {
	if t := SemanticText(e); t != "" {
		return t
	}
	return string(e.Data)
}

// indexFold finds sub in s ignoring case (Unicode simple folding) and
// returns the byte range of the match in s, or -1.
func indexFold(s, sub string) (start, end int) {
	for i := range s {
		j, k := i, 0
		for k < len(sub) && j < len(s) {
			r1, n1 := utf8.DecodeRuneInString(s[j:])
			r2, n2 := utf8.DecodeRuneInString(sub[k:])
			if r1 != r2 && !strings.EqualFold(string(r1), string(r2)) {
				break
			}
			j, k = j+n1, k+n2
		}
		if k == len(sub) {
			return i, j
		}
	}
	return -1, -1
}

// snippet is the match s[at:end] with up to snippetRunes runes on each side,
// whitespace runs shown as one space, "…" where text was cut.
func snippet(text string, at, end int) string {
	start := at
	for i := 0; i < snippetRunes && start > 0; i++ {
		_, size := utf8.DecodeLastRuneInString(text[:start])
		start -= size
	}
	for i := 0; i < snippetRunes && end < len(text); i++ {
		_, size := utf8.DecodeRuneInString(text[end:])
		end += size
	}
	s := strings.Join(strings.Fields(text[start:end]), " ")
	if start > 0 {
		s = "…" + s
	}
	if end < len(text) {
		s += "…"
	}
	return s
}
