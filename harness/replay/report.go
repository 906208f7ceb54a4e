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
		writeChildren(w, r, 0, 1, verbose)
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

// writeChildren writes the child sessions started by session parent (0:
// the primary), each under the call that started it, indented by depth,
// their own children below them.
func writeChildren(w io.Writer, r *Result, parent, depth int, verbose bool) {
	pad := strings.Repeat("  ", depth)
	for _, c := range r.Children {
		if c.Parent != parent {
			continue
		}
		fmt.Fprintf(w, "%s└ %s  %s %d/%d events  (started by call %s)\n", pad, c.File, c.Verdict, c.Comparison.Matched, c.Comparison.Total, c.CallID)
		if verbose {
			for _, p := range c.Comparison.Pairs {
				mark := "="
				if !p.Match {
					mark = "≠"
				}
				fmt.Fprintf(w, "%s    %s turn %d  %s\n", pad, mark, p.Turn, p.Label())
			}
		}
		for _, n := range c.Notes {
			fmt.Fprintf(w, "%s  note: %s\n", pad, n)
		}
		writeChildren(w, r, c.Index, depth+1, verbose)
	}
}
