package harness

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
)

// Drift is one line where a committed file and a fresh run disagree.
type Drift struct {
	// File is the path shown to the reader, e.g. "snapshots/txt/profiles.txt".
	File string
	// Line is the 1-based line number; 0 when the file as a whole is missing.
	Line int
	// Want is the committed line, Got the fresh one.
	Want, Got string
	// WantEOF and GotEOF mark a side that has no line here (the file ended).
	WantEOF, GotEOF bool
	// Note explains differences that are not about one line's text
	// ("missing file", "final newline ...").
	Note string
}

// String renders the drift for a terminal, naming file and line:
//
//	snapshots/txt/profiles.txt:12:
//		want: linux/bwrap   read-only : bwrap --ro-bind / / ...
//		got:  linux/bwrap   read-only : bwrap --ro-bind /usr /usr ...
func (d Drift) String() string {
	if d.Line == 0 {
		return fmt.Sprintf("%s: %s", d.File, d.Note)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s:%d:", d.File, d.Line)
	if d.Note != "" {
		fmt.Fprintf(&b, " %s", d.Note)
	}
	fmt.Fprintf(&b, "\n\twant: %s\n\tgot:  %s", show(d.Want, d.WantEOF), show(d.Got, d.GotEOF))
	return b.String()
}

// show prints a line as it is, unless invisible characters would hide the
// difference (trailing blanks, control characters, an empty line): then quoted.
func show(s string, eof bool) string {
	if eof {
		return "(end of file)"
	}
	if s == "" || strings.TrimRightFunc(s, unicode.IsSpace) != s || strings.IndexFunc(s, func(r rune) bool {
		return unicode.IsControl(r) && r != '\t'
	}) >= 0 {
		return strconv.Quote(s)
	}
	return s
}

// splitLines splits text into lines without their "\n" and reports whether
// the text ended with a newline. "" is zero lines.
func splitLines(s string) (lines []string, finalNewline bool) {
	if s == "" {
		return nil, false
	}
	finalNewline = strings.HasSuffix(s, "\n")
	lines = strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	return lines, finalNewline
}

// CompareLines compares want (committed) and got (fresh) line by line. It
// returns at most max drifts (all of them when max <= 0) and the total number
// of differing lines. Equal inputs give (nil, 0). A difference only in the
// final newline is one drift on the last line with a Note.
func CompareLines(file string, want, got []byte, max int) (drifts []Drift, total int) {
	wl, wnl := splitLines(string(want))
	gl, gnl := splitLines(string(got))
	n := len(wl)
	if len(gl) > n {
		n = len(gl)
	}
	add := func(d Drift) {
		total++
		if max <= 0 || len(drifts) < max {
			drifts = append(drifts, d)
		}
	}
	for i := 0; i < n; i++ {
		d := Drift{File: file, Line: i + 1}
		if i < len(wl) {
			d.Want = wl[i]
		} else {
			d.WantEOF = true
		}
		if i < len(gl) {
			d.Got = gl[i]
		} else {
			d.GotEOF = true
		}
		if d.WantEOF != d.GotEOF || d.Want != d.Got {
			add(d)
		}
	}
	if total == 0 && wnl != gnl && n > 0 {
		d := Drift{File: file, Line: n, Want: wl[n-1], Got: gl[n-1]}
		d.Note = "final newline: committed " + have(wnl) + ", fresh run " + have(gnl)
		add(d)
	}
	return drifts, total
}

func have(b bool) string {
	if b {
		return "has one"
	}
	return "has none"
}

// FormatDrifts renders the drifts of one file, one block each, followed by
// "... and N more differing lines" when total exceeds len(drifts).
func FormatDrifts(drifts []Drift, total int) string {
	var b strings.Builder
	for _, d := range drifts {
		b.WriteString(d.String())
		b.WriteByte('\n')
	}
	if more := total - len(drifts); more > 0 && len(drifts) > 0 {
		fmt.Fprintf(&b, "\t... and %d more differing line(s) in %s\n", more, drifts[0].File)
	}
	return b.String()
}

// LineDiff is a compact human diff of two texts for failure messages: the
// first few differing lines, each naming file and line. It returns "" when
// they are equal.
func LineDiff(file string, want, got []byte) string {
	d, total := CompareLines(file, want, got, 5)
	return FormatDrifts(d, total)
}
