package replay

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// Counts are the verdict totals of a run.
type Counts struct {
	Total    int `json:"total"`
	Match    int `json:"match"`
	Mismatch int `json:"mismatch"`
	Error    int `json:"error"`
}

// Count tallies verdicts.
func Count(rs []*Result) Counts {
	c := Counts{Total: len(rs)}
	for _, r := range rs {
		switch r.Verdict {
		case Match:
			c.Match++
		case Mismatch:
			c.Mismatch++
		default:
			c.Error++
		}
	}
	return c
}

// WriteJSON writes the machine-readable report: {ok, summary, recordings}.
func WriteJSON(w io.Writer, rs []*Result) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(struct {
		OK         bool      `json:"ok"`
		Summary    Counts    `json:"summary"`
		Recordings []*Result `json:"recordings"`
	}{AllMatch(rs), Count(rs), rs})
}

// WriteText writes one line per recording (its first mismatch indented below
// it; with verbose every projected event) and a summary line.
func WriteText(w io.Writer, rs []*Result, verbose bool) {
	width := 0
	for _, r := range rs {
		width = max(width, len(r.Name))
	}
	for _, r := range rs {
		switch r.Verdict {
		case Failed:
			fmt.Fprintf(w, "%-*s  ERROR     %s\n", width, r.Name, r.Error)
			continue
		case Match:
			fmt.Fprintf(w, "%-*s  match     %d/%d events  (%s, approval %s)\n", width, r.Name, r.Comparison.Matched, r.Comparison.Total, r.Mode, r.Approval)
		default:
			fmt.Fprintf(w, "%-*s  MISMATCH  %d/%d events  (%s, approval %s)\n", width, r.Name, r.Comparison.Matched, r.Comparison.Total, r.Mode, r.Approval)
			fmt.Fprint(w, r.Detail())
		}
		if verbose {
			for _, p := range r.Comparison.Pairs {
				mark := "="
				if !p.Match {
					mark = "≠"
				}
				fmt.Fprintf(w, "    %s turn %d  %s\n", mark, p.Turn, p.Label())
			}
		}
		for _, n := range r.Notes {
			fmt.Fprintf(w, "  note: %s\n", n)
		}
		if len(r.Served) > 0 {
			fmt.Fprintf(w, "  served from the recording: %s\n", strings.Join(r.Served, ", "))
		}
	}
	c := Count(rs)
	verdict := "FAIL"
	if AllMatch(rs) {
		verdict = "ok"
	}
	fmt.Fprintf(w, "%s: %d recordings: %d match, %d mismatch, %d error\n", verdict, c.Total, c.Match, c.Mismatch, c.Error)
}
