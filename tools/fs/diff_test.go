package fs

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

func numbered(n int, change map[int]string) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		if s, ok := change[i]; ok {
			b.WriteString(s + "\n")
		} else {
			fmt.Fprintf(&b, "line%d\n", i)
		}
	}
	return b.String()
}

func TestDiffs(t *testing.T) {
	cases := []struct {
		name, before, after, want string
	}{
		{"one-line change gives one hunk with 3 context lines each side",
			numbered(10, nil), numbered(10, map[int]string{5: "LINE5"}),
			`[{"path":"p","oldText":"line2\nline3\nline4\nline5\nline6\nline7\nline8","newText":"line2\nline3\nline4\nLINE5\nline6\nline7\nline8"}]`},
		{"scattered replace_all gives two hunks",
			numbered(20, nil), numbered(20, map[int]string{3: "X3", 16: "X16"}),
			`[{"path":"p","oldText":"line1\nline2\nline3\nline4\nline5\nline6","newText":"line1\nline2\nX3\nline4\nline5\nline6"},{"path":"p","oldText":"line13\nline14\nline15\nline16\nline17\nline18\nline19","newText":"line13\nline14\nline15\nX16\nline17\nline18\nline19"}]`},
		{"changes six common lines apart merge into one hunk",
			numbered(20, nil), numbered(20, map[int]string{5: "X5", 12: "X12"}),
			`[{"path":"p","oldText":"line2\nline3\nline4\nline5\nline6\nline7\nline8\nline9\nline10\nline11\nline12\nline13\nline14\nline15","newText":"line2\nline3\nline4\nX5\nline6\nline7\nline8\nline9\nline10\nline11\nX12\nline13\nline14\nline15"}]`},
		{"identical texts give no hunks", "a\nb\n", "a\nb\n", `[]`},
		{"insertion into empty has no old text", "", "brand new", `[{"path":"p","oldText":null,"newText":"brand new"}]`},
		{"whole deletion has empty new text", "a\nb\n", "", `[{"path":"p","oldText":"a\nb","newText":""}]`},
		{"no-newline marker is dropped", "x", "y", `[{"path":"p","oldText":"x","newText":"y"}]`},
		{"context 3 gives 7 lines each side starting at line 7",
			numbered(20, nil), numbered(20, map[int]string{10: "TEN"}),
			`[{"path":"p","oldText":"line7\nline8\nline9\nline10\nline11\nline12\nline13","newText":"line7\nline8\nline9\nTEN\nline11\nline12\nline13"}]`},
		{"recorded fs-edit diff", "mode=DEBUG\nlevel=info\n", "mode=RELEASE\nlevel=info\n",
			`[{"path":"p","oldText":"mode=DEBUG\nlevel=info","newText":"mode=RELEASE\nlevel=info"}]`},
		{"recorded fs-policy-reject diff", "color: blue\n", "color: green\n",
			`[{"path":"p","oldText":"color: blue","newText":"color: green"}]`},
		{"adding a final newline changes the last line", "a\nb", "a\nb\n", `[{"path":"p","oldText":"a\nb","newText":"a\nb"}]`},
		{"insertion between equal lines keeps context", "a\nb\nc\n", "a\nb\nNEW\nc\n", `[{"path":"p","oldText":"a\nb\nc","newText":"a\nb\nNEW\nc"}]`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := json.Marshal(Diffs("p", c.before, c.after))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != c.want {
				t.Fatalf("Diffs =\n%s\nwant\n%s", got, c.want)
			}
		})
	}
}

func TestStructuredPatchHunkHeaders(t *testing.T) {
	cases := []struct {
		name, before, after, want string
	}{
		{"single change", numbered(10, nil), numbered(10, map[int]string{5: "X"}), "-2,7 +2,7"},
		{"change on first line", numbered(10, nil), numbered(10, map[int]string{1: "X"}), "-1,4 +1,4"},
		{"append a line", "a\n", "a\nb\n", "-1,1 +1,2"},
		{"two hunks", numbered(20, nil), numbered(20, map[int]string{3: "X", 16: "Y"}), "-1,6 +1,6|-13,7 +13,7"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var got []string
			for _, h := range StructuredPatch(c.before, c.after, DiffContext) {
				got = append(got, fmt.Sprintf("-%d,%d +%d,%d", h.OldStart, h.OldLines, h.NewStart, h.NewLines))
			}
			if strings.Join(got, "|") != c.want {
				t.Fatalf("hunks %v, want %s", got, c.want)
			}
		})
	}
}
