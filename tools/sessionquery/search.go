package sessionquery

import (
	"cmp"
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
	l, current, err := cfg.target(call, raw)
	if err != nil {
		return pipeline.Output{}, err
	}
	events, err := l.Events()
	if err != nil {
		return pipeline.Output{}, pipeline.NewError(nameHarness, "SESSION_QUERY_TOOL_FAILED", "session query operation failed")
	}
	limit := int64(-1)
	if current {
		// the current session: nothing from the step performing this call
		if e, ok := session.Last(events, "step/start"); ok {
			limit = e.Seq - 1
		}
	}
	type hit struct {
		e      session.Event
		spans  []span
		text   string
		length int
	}
	var hits []hit
	query := tokenize(f.query)
	for _, e := range events {
		if limit >= 0 && e.Seq > limit || !f.admits(e) {
			continue
		}
		text := sanitize(SemanticText(e))
		spans := phraseSpans(text, query)
		if len(spans) == 0 {
			continue
		}
		hits = append(hits, hit{e, spans, text, utf8.RuneCountInString(text)})
	}
	// upstream's ORDER BY match_count DESC, document_length ASC, time DESC, seq DESC
	slices.SortFunc(hits, func(a, b hit) int {
		return cmp.Or(cmp.Compare(len(b.spans), len(a.spans)), cmp.Compare(a.length, b.length),
			cmp.Compare(b.e.Time, a.e.Time), cmp.Compare(b.e.Seq, a.e.Seq))
	})
	var b strings.Builder
	b.WriteString(heading(l, events))
	if len(hits) == 0 {
		b.WriteString("\n\nNo prior event matches found.")
		return textOutput(b.String()), nil
	}
	capped := len(hits) > cfg.MaxSearchResults
	if capped {
		hits = hits[:cfg.MaxSearchResults]
	}
	fmt.Fprintf(&b, "\n\nEvent search results (%d):", len(hits))
	for i, h := range hits {
		fmt.Fprintf(&b, "\n%d. seq %d | %s | %s | %s\n   Snippet: %s", i+1, h.e.Seq, h.e.Type, surface(h.e), isoTime(h.e.Time), snippet(h.text, h.spans))
	}
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
