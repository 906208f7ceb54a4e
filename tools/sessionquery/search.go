package sessionquery

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/dshsim/dshsim/internal/jsjson"
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

// maxSafeInteger is JavaScript's Number.MAX_SAFE_INTEGER.
const maxSafeInteger = 1<<53 - 1

// normalizeQuery is upstream's: trimmed, every run of JavaScript whitespace
// one space; empty, or holding NUL, is refused.
func normalizeQuery(raw map[string]json.RawMessage) (string, error) {
	var q string
	if v, ok := raw["query"]; !ok || json.Unmarshal(v, &q) != nil {
		return "", pipeline.NewError(nameQuery, CodeInvalidQuery, "session-search query must be text")
	}
	q = strings.Join(strings.FieldsFunc(q, jsjson.IsSpace), " ")
	switch {
	case q == "":
		return "", pipeline.NewError(nameQuery, CodeInvalidQuery, "session-search query must contain non-whitespace text")
	case strings.ContainsRune(q, 0):
		return "", pipeline.NewError(nameQuery, CodeInvalidQuery, "session-search query must not contain NUL")
	}
	return q, nil
}

// sequenceRange reads seq_from and seq_to: non-negative safe integers, from
// not above to.
func sequenceRange(raw map[string]json.RawMessage) (from, to *int64, err error) {
	for _, b := range []struct {
		key, name string
		dst       **int64
	}{{"seq_from", "sequence lower bound", &from}, {"seq_to", "sequence upper bound", &to}} {
		n, ok, err := safeIntNamed(raw, b.key, b.name)
		if err != nil {
			return nil, nil, err
		}
		if ok {
			*b.dst = &n
		}
	}
	if from != nil && to != nil && *from > *to {
		return nil, nil, invalidFilter("session sequence range from must be less than or equal to to")
	}
	return from, to, nil
}

// eventFilters reads the time range and the type and surface lists (the
// sequence range is the caller's, clamped to the calling step).
func eventFilters(raw map[string]json.RawMessage) (filter, error) {
	var f filter
	var err error
	if f.timeFrom, f.timeTo, err = timeRange(raw); err != nil {
		return f, err
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
		if len(*b.dst) == 0 {
			return f, invalidFilter(b.key + " must contain at least one value when supplied")
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
	l, f, events, empty, err := cfg.searchRequest(call, raw)
	if err != nil || empty {
		if err != nil {
			return pipeline.Output{}, err
		}
		return textOutput(heading(l, events) + "\n\nNo prior event matches found."), nil
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
		if !f.admits(e) {
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

// searchRequest checks a search in upstream's order: the target session,
// the query, the sequence range (on the current session clamped to before
// the calling step's start; a range left empty is a search with no hits,
// whatever the other filters say: empty), then the time range and the
// lists.
func (cfg Config) searchRequest(call *pipeline.Call, raw map[string]json.RawMessage) (l Source, f filter, events []session.Event, empty bool, err error) {
	var current bool
	if l, current, err = cfg.target(call, raw); err != nil {
		return nil, f, nil, false, err
	}
	query, err := normalizeQuery(raw)
	if err != nil {
		return nil, f, nil, false, err
	}
	from, to, err := sequenceRange(raw)
	if err != nil {
		return nil, f, nil, false, err
	}
	if events, err = l.Events(); err != nil {
		return nil, f, nil, false, pipeline.NewError(nameHarness, "SESSION_QUERY_TOOL_FAILED", "session query operation failed")
	}
	if current {
		// the current session: nothing from the step performing this call
		e, ok := session.Last(events, session.KindStepStart)
		if !ok {
			return nil, f, nil, false, pipeline.NewError(nameHarness, "SESSION_QUERY_TOOL_NO_CURRENT_STEP", "current-session search requires an active step boundary")
		}
		limit := min(int64(maxSafeInteger), e.Seq-1)
		if to != nil {
			limit = min(*to, limit)
		}
		to = &limit
	}
	if from != nil && to != nil && *from > *to {
		return l, f, events, true, nil
	}
	if f, err = eventFilters(raw); err != nil {
		return nil, f, nil, false, err
	}
	f.query, f.seqFrom, f.seqTo = query, from, to
	return l, f, events, false, nil
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
