package projection

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"
)

// FieldDiff is one differing field of a pair.
type FieldDiff struct {
	// Path is the field path inside the item, e.g. "text" or "meta.diffs[0].newText".
	Path string `json:"path"`
	// Expected and Got are the JSON values; Absent marks a missing side.
	Expected any  `json:"expected,omitempty"`
	Got      any  `json:"got,omitempty"`
	Absent   bool `json:"absent,omitempty"`
	// Detail says where two strings first differ.
	Detail string `json:"detail,omitempty"`
}

// String renders one readable line.
func (d FieldDiff) String() string {
	s := fmt.Sprintf("%s: expected %s, got %s", d.Path, show(d.Expected), show(d.Got))
	if d.Detail != "" {
		s += " (" + d.Detail + ")"
	}
	return s
}

// Pair is one position of a turn: the expected item, the got item (either may
// be nil when one side has fewer items) and their differences.
type Pair struct {
	// Turn is the turn number.
	Turn int `json:"turn"`
	// Expected is nil when the replay produced an extra item.
	Expected *Item `json:"expected,omitempty"`
	// Got is nil when the replay is missing an item.
	Got *Item `json:"got,omitempty"`
	// Match reports equality after normalisation.
	Match bool `json:"match"`
	// Diffs lists the differing fields (empty when Match).
	Diffs []FieldDiff `json:"diffs,omitempty"`
}

// Label names the pair by its expected item (or its got item).
func (p Pair) Label() string {
	if p.Expected != nil {
		return p.Expected.Label()
	}
	if p.Got != nil {
		return p.Got.Label()
	}
	return ""
}

// Comparison is the outcome of comparing two projections.
type Comparison struct {
	// Pairs are all positions, turn by turn.
	Pairs []Pair `json:"pairs"`
	// Matched counts matching pairs; Total counts expected items.
	Matched int `json:"matched"`
	Total   int `json:"total"`
	// Mismatched counts pairs that do not match (including extra got items).
	Mismatched int `json:"mismatched"`
}

// First returns the first mismatching pair, or nil.
func (c Comparison) First() *Pair {
	for i := range c.Pairs {
		if !c.Pairs[i].Match {
			return &c.Pairs[i]
		}
	}
	return nil
}

// Compare pairs expected and got items per turn and by position.
func Compare(expected, got []Item) Comparison {
	byTurn := func(items []Item) (map[int][]Item, []int) {
		m := map[int][]Item{}
		var turns []int
		for _, it := range items {
			if _, ok := m[it.Turn]; !ok {
				turns = append(turns, it.Turn)
			}
			m[it.Turn] = append(m[it.Turn], it)
		}
		return m, turns
	}
	em, et := byTurn(expected)
	gm, gt := byTurn(got)
	seen := map[int]bool{}
	var turns []int
	for _, t := range append(et, gt...) {
		if !seen[t] {
			seen[t] = true
			turns = append(turns, t)
		}
	}
	sort.Ints(turns)
	c := Comparison{Total: len(expected)}
	for _, t := range turns {
		e, g := em[t], gm[t]
		n := max(len(e), len(g))
		for i := range n {
			p := Pair{Turn: t}
			if i < len(e) {
				p.Expected = &e[i]
			}
			if i < len(g) {
				p.Got = &g[i]
			}
			switch {
			case p.Expected == nil:
				p.Diffs = []FieldDiff{{Path: "(item)", Got: p.Got.Label(), Absent: true, Detail: "the replay produced an extra " + p.Got.Kind}}
			case p.Got == nil:
				p.Diffs = []FieldDiff{{Path: "(item)", Expected: p.Expected.Label(), Absent: true, Detail: "the replay produced no " + p.Expected.Kind + " here"}}
			case p.Expected.Kind != p.Got.Kind:
				p.Diffs = []FieldDiff{{Path: "kind", Expected: p.Expected.Kind, Got: p.Got.Kind}}
			default:
				p.Diffs = diffValues("", p.Expected.Fields, p.Got.Fields)
			}
			p.Match = len(p.Diffs) == 0
			if p.Match {
				c.Matched++
			} else {
				c.Mismatched++
			}
			c.Pairs = append(c.Pairs, p)
		}
	}
	return c
}

// DiffValues lists the differing leaves of two parsed JSON values (maps,
// slices, strings, numbers, booleans, nil), each with its path below path.
func DiffValues(path string, e, g any) []FieldDiff { return diffValues(path, e, g) }

// diffValues lists the differing leaves of two parsed JSON values.
func diffValues(path string, e, g any) []FieldDiff {
	name := func(k string) string {
		if path == "" {
			return k
		}
		return path + "." + k
	}
	switch ev := e.(type) {
	case map[string]any:
		gv, ok := g.(map[string]any)
		if !ok {
			break
		}
		keys := map[string]bool{}
		for k := range ev {
			keys[k] = true
		}
		for k := range gv {
			keys[k] = true
		}
		sorted := make([]string, 0, len(keys))
		for k := range keys {
			sorted = append(sorted, k)
		}
		sort.Strings(sorted)
		var out []FieldDiff
		for _, k := range sorted {
			a, aok := ev[k]
			b, bok := gv[k]
			switch {
			case aok && !bok:
				out = append(out, FieldDiff{Path: name(k), Expected: a, Absent: true, Detail: "missing in the replay"})
			case !aok && bok:
				out = append(out, FieldDiff{Path: name(k), Got: b, Absent: true, Detail: "not in the recording"})
			default:
				out = append(out, diffValues(name(k), a, b)...)
			}
		}
		return out
	case []any:
		gv, ok := g.([]any)
		if !ok {
			break
		}
		var out []FieldDiff
		for i := range max(len(ev), len(gv)) {
			p := fmt.Sprintf("%s[%d]", path, i)
			switch {
			case i >= len(gv):
				out = append(out, FieldDiff{Path: p, Expected: ev[i], Absent: true, Detail: "missing in the replay"})
			case i >= len(ev):
				out = append(out, FieldDiff{Path: p, Got: gv[i], Absent: true, Detail: "not in the recording"})
			default:
				out = append(out, diffValues(p, ev[i], gv[i])...)
			}
		}
		return out
	case string:
		gv, ok := g.(string)
		if ok {
			if ev == gv {
				return nil
			}
			return []FieldDiff{{Path: path, Expected: ev, Got: gv, Detail: firstDifference(ev, gv)}}
		}
	default:
		if equalJSON(e, g) {
			return nil
		}
	}
	return []FieldDiff{{Path: path, Expected: e, Got: g}}
}

func equalJSON(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// firstDifference says where two strings first differ, with a little context.
func firstDifference(a, b string) string {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	for i > 0 && !utf8.RuneStart(a[min(i, len(a)-1)]) {
		i--
	}
	ctx := func(s string) string {
		end := min(len(s), i+40)
		for end < len(s) && !utf8.RuneStart(s[end]) {
			end++
		}
		return s[i:end]
	}
	return fmt.Sprintf("first difference at byte %d: expected %q, got %q; lengths %d vs %d", i, ctx(a), ctx(b), len(a), len(b))
}

// Show renders a parsed JSON value on one line for messages (HTML
// unescaped, at most 300 bytes).
func Show(v any) string { return show(v) }

func show(v any) string {
	if v == nil {
		return "(absent)"
	}
	var buf strings.Builder
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Sprint(v)
	}
	s := strings.TrimSuffix(buf.String(), "\n")
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return strings.ReplaceAll(s, "\n", `\n`)
}
