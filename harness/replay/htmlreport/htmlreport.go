package htmlreport

import (
	_ "embed"
	"encoding/json"
	"io"
	"strings"

	"github.com/dshsim/dshsim/harness/replay"
	"github.com/dshsim/dshsim/harness/replay/projection"
)

type side struct {
	Kind   string         `json:"kind"`
	Label  string         `json:"label"`
	Seq    int64          `json:"seq"`
	Fields map[string]any `json:"fields"`
}

type row struct {
	Turn     int                    `json:"turn"`
	Expected *side                  `json:"expected"`
	Got      *side                  `json:"got"`
	Match    bool                   `json:"match"`
	Diffs    []projection.FieldDiff `json:"diffs"`
}

type rec struct {
	Name     string `json:"name"`
	Frontend string `json:"frontend,omitempty"`
	Verdict  string `json:"verdict"`
	Error    string `json:"error"`
	Mode     string `json:"mode"`
	Approval string `json:"approval"`
	Settings string `json:"settings"`
	tally
	First    string   `json:"first"`
	Served   []string `json:"served"`
	Rows     []row    `json:"rows"`
	Children []child  `json:"children"`
}

// child is one child session's comparison: nested, in the page, under the
// parent's call that started it.
type child struct {
	Index   int    `json:"index"`
	File    string `json:"file"`
	Parent  int    `json:"parent"`
	CallID  string `json:"callId"`
	Verdict string `json:"verdict"`
	tally
	Rows []row `json:"rows"`
}

// tally is what a recording and a child both show of their comparison: how
// many events matched of how many, and the run's flags and notes (in the
// page's JSON, fields of the recording or child itself).
type tally struct {
	Matched int      `json:"matched"`
	Total   int      `json:"total"`
	Flags   []string `json:"flags"`
	Notes   []string `json:"notes"`
}

func tallyOf(c projection.Comparison, flags, notes []string) tally {
	return tally{Matched: c.Matched, Total: c.Total, Flags: flags, Notes: notes}
}

func rows(c projection.Comparison) []row {
	out := []row{}
	for _, p := range c.Pairs {
		out = append(out, row{Turn: p.Turn, Expected: toSide(p.Expected), Got: toSide(p.Got), Match: p.Match, Diffs: p.Diffs})
	}
	return out
}

func toSide(it *projection.Item) *side {
	if it == nil {
		return nil
	}
	return &side{Kind: it.Kind, Label: it.Label(), Seq: it.Seq, Fields: it.Fields}
}

// Data converts results into the JSON the page embeds.
func Data(results []*replay.Result) ([]byte, error) {
	out := make([]rec, 0, len(results))
	for _, r := range results {
		x := rec{Name: r.Name, Frontend: r.Frontend, Verdict: r.Verdict, Error: r.Error, Mode: r.Mode, Approval: r.Approval, Settings: r.Settings,
			tally: tallyOf(r.Comparison, r.Flags, r.Notes), First: r.FirstDifference(), Served: r.Served, Rows: rows(r.Comparison), Children: []child{}}
		for _, c := range r.Children {
			x.Children = append(x.Children, child{Index: c.Index, File: c.File, Parent: c.Parent, CallID: c.CallID, Verdict: c.Verdict,
				tally: tallyOf(c.Comparison, c.Flags, c.Notes), Rows: rows(c.Comparison)})
		}
		out = append(out, x)
	}
	return json.Marshal(out) // escapes <, > and & so the JSON is safe inside <script>
}

// Write writes the page for results.
func Write(w io.Writer, results []*replay.Result) error {
	data, err := Data(results)
	if err != nil {
		return err
	}
	_, err = io.WriteString(w, strings.Replace(page, "/*DATA*/[]", string(data), 1))
	return err
}

// page is the report page; Write puts the data in place of its /*DATA*/[].
//
//go:embed page.html
var page string
