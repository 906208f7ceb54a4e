package snippets

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"strconv"
	"strings"

	"github.com/dshsim/dshsim/harness"
)

// Marker starts an include line (and a section marker inside a source file).
const Marker = "--8<--"

// Include is one --8<-- line of a page.
type Include struct {
	// Line is the 1-based page line of the include.
	Line int
	// Indent is the leading white space of the include line; rendering
	// prefixes every included line with it.
	Indent string
	// Spec is the text between the quotes, e.g. "a.txt:1:28".
	Spec string
	// Path is the included file, slash-separated, relative to the root.
	Path string
	// Start and End select lines Start..End (1-based, inclusive). End is -1
	// for "to the end of the file"; both are 0 for the whole file or a section.
	Start, End int
	// Section names a section marked in the file; empty for a file or range.
	Section string
}

// Error is one problem with one include (or one page line).
type Error struct {
	// Page is the page's name as shown (e.g. "docs/tools.md").
	Page string
	// Line is the 1-based page line.
	Line int
	// Spec is the include's quoted text, empty for an unparseable line.
	Spec string
	// Msg says what is wrong.
	Msg string
}

// Error returns "page:line: --8<-- \"spec\": problem".
func (e *Error) Error() string {
	if e.Spec != "" {
		return fmt.Sprintf("%s:%d: %s %q: %s", e.Page, e.Line, Marker, e.Spec, e.Msg)
	}
	return fmt.Sprintf("%s:%d: %s", e.Page, e.Line, e.Msg)
}

// Errors is every problem found on a page, in page order.
type Errors []*Error

// Error returns every problem, one per line.
func (es Errors) Error() string {
	lines := make([]string, len(es))
	for i, e := range es {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

func (es Errors) err() error {
	if len(es) == 0 {
		return nil
	}
	return es
}

var (
	rangeRe   = regexp.MustCompile(`^(.+?):(\d+):(\d+)$`)
	fromRe    = regexp.MustCompile(`^(.+?):(\d+)$`)
	sectionRe = regexp.MustCompile(`^(.+?):([A-Za-z_][A-Za-z0-9_.-]*)$`)
	markerRe  = regexp.MustCompile(`--8<--\s*\[(start|end):([^\]]*)\]`)
)

// Parse returns every include of page in order. name is the page as shown in
// errors. Lines that start with --8<-- but are not a well-formed include are
// errors, never skipped.
func Parse(name string, page []byte) ([]Include, error) {
	var incs []Include
	var errs Errors
	for i, line := range strings.Split(string(page), "\n") {
		trimmed := strings.TrimLeft(line, " \t")
		if !strings.HasPrefix(trimmed, Marker) {
			continue
		}
		inc, err := parseLine(trimmed)
		if err != nil {
			err.Page, err.Line = name, i+1
			errs = append(errs, err)
			continue
		}
		inc.Line = i + 1
		inc.Indent = line[:len(line)-len(trimmed)]
		incs = append(incs, inc)
	}
	return incs, errs.err()
}

func parseLine(trimmed string) (Include, *Error) {
	rest := strings.TrimSpace(strings.TrimPrefix(trimmed, Marker))
	if len(rest) < 2 || (rest[0] != '"' && rest[0] != '\'') || rest[len(rest)-1] != rest[0] {
		return Include{}, &Error{Msg: fmt.Sprintf(`malformed include %q: want %s "path", "path:start:end" or "path:section"`, trimmed, Marker)}
	}
	spec := rest[1 : len(rest)-1]
	inc := Include{Spec: spec, Path: spec}
	bad := func(msg string) (Include, *Error) { return Include{}, &Error{Spec: spec, Msg: msg} }
	if m := rangeRe.FindStringSubmatch(spec); m != nil {
		inc.Path = m[1]
		inc.Start, _ = strconv.Atoi(m[2])
		inc.End, _ = strconv.Atoi(m[3])
		if inc.Start < 1 || inc.End < inc.Start {
			return bad(fmt.Sprintf("bad line range %d:%d (1-based, inclusive, start <= end)", inc.Start, inc.End))
		}
	} else if m := fromRe.FindStringSubmatch(spec); m != nil {
		inc.Path = m[1]
		inc.Start, _ = strconv.Atoi(m[2])
		inc.End = -1
		if inc.Start < 1 {
			return bad(fmt.Sprintf("bad start line %d (1-based)", inc.Start))
		}
	} else if m := sectionRe.FindStringSubmatch(spec); m != nil {
		inc.Path, inc.Section = m[1], m[2]
	}
	if inc.Path == "" || path.IsAbs(inc.Path) || !fs.ValidPath(inc.Path) || path.Clean(inc.Path) != inc.Path {
		return bad("path must be clean, relative to the repository root and inside it")
	}
	return inc, nil
}

// Extract returns the lines inc selects from data (the included file's
// content), without their newlines and without section marker lines.
func Extract(inc Include, data []byte) ([]string, error) {
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	if len(data) == 0 {
		lines = nil
	}
	switch {
	case inc.Section != "":
		return section(inc, lines)
	case inc.Start > 0:
		end := inc.End
		if end == -1 {
			end = len(lines)
		}
		if inc.Start > len(lines) || end > len(lines) {
			return nil, fmt.Errorf("line range %d:%d is past the end of %s (%d lines)", inc.Start, end, inc.Path, len(lines))
		}
		return dropMarkers(lines[inc.Start-1 : end]), nil
	default:
		return dropMarkers(lines), nil
	}
}

func section(inc Include, lines []string) ([]string, error) {
	start, end := -1, -1
	for i, l := range lines {
		m := markerRe.FindStringSubmatch(l)
		if m == nil || m[2] != inc.Section {
			continue
		}
		switch {
		case m[1] == "start" && start >= 0:
			return nil, fmt.Errorf("section %q starts twice in %s (lines %d and %d)", inc.Section, inc.Path, start+1, i+1)
		case m[1] == "start":
			start = i
		case m[1] == "end" && start >= 0 && end < 0:
			end = i
		case m[1] == "end" && end >= 0:
			return nil, fmt.Errorf("section %q ends twice in %s (lines %d and %d)", inc.Section, inc.Path, end+1, i+1)
		default:
			return nil, fmt.Errorf("section %q ends on line %d of %s before it starts", inc.Section, i+1, inc.Path)
		}
	}
	switch {
	case start < 0:
		return nil, fmt.Errorf("no section %q in %s (mark it with %s [start:%s] and %s [end:%s] comments)",
			inc.Section, inc.Path, Marker, inc.Section, Marker, inc.Section)
	case end < 0:
		return nil, fmt.Errorf("section %q in %s starts on line %d and never ends", inc.Section, inc.Path, start+1)
	}
	return dropMarkers(lines[start+1 : end]), nil
}

func dropMarkers(lines []string) []string {
	out := make([]string, 0, len(lines))
	for _, l := range lines {
		if !markerRe.MatchString(l) {
			out = append(out, l)
		}
	}
	return out
}

// Source gives [Check] and [Render] the included files.
type Source struct {
	// Read returns the committed content of a path named on the page.
	Read func(path string) ([]byte, error)
	// Fresh, if not nil, returns what a fresh run produces for path:
	// ok reports whether this run produced it; a non-nil error says the path
	// can never be fresh (e.g. a snapshots/ file no sim produces).
	Fresh func(path string) (data []byte, ok bool, err error)
}

// Result counts what [Check] resolved.
type Result struct {
	// Includes is the number of include lines resolved.
	Includes int
	// Fresh is how many of them were compared with a fresh run.
	Fresh int
}

// Check resolves every include of page against src and, where src.Fresh
// knows the file, compares the selected lines with the fresh run. All
// problems are returned together as [Errors].
func Check(name string, page []byte, src Source) (Result, error) {
	var res Result
	incs, err := Parse(name, page)
	errs, _ := err.(Errors)
	for _, inc := range incs {
		fail := func(format string, args ...any) {
			errs = append(errs, &Error{Page: name, Line: inc.Line, Spec: inc.Spec, Msg: fmt.Sprintf(format, args...)})
		}
		data, err := read(src, inc.Path)
		if err != nil {
			fail("%v", err)
			continue
		}
		committed, err := Extract(inc, data)
		if err != nil {
			fail("%v", err)
			continue
		}
		res.Includes++
		if src.Fresh == nil {
			continue
		}
		fresh, ok, err := src.Fresh(inc.Path)
		if err != nil {
			fail("%v", err)
			continue
		}
		if !ok {
			continue
		}
		res.Fresh++
		now, err := Extract(inc, fresh)
		if err != nil {
			fail("stale: in the fresh run, %v", err)
			continue
		}
		want := strings.Join(committed, "\n")
		got := strings.Join(now, "\n")
		if want != got {
			d, total := harness.CompareLines(inc.Path, []byte(want), []byte(got), 1)
			first := d[0]
			fail("stale against the fresh run (%d line(s) differ): included line %d (%s)\n\twant: %s\n\tgot:  %s",
				total, first.Line, fileLine(inc, first.Line), quoteEOF(first.Want, first.WantEOF), quoteEOF(first.Got, first.GotEOF))
		}
	}
	return res, errs.err()
}

// read reads path through src, turning "not found" into a short message
// that names the path as the page wrote it.
func read(src Source, p string) ([]byte, error) {
	data, err := src.Read(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("missing file %s", p)
	}
	return data, err
}

// fileLine names the line of the included file behind the n-th included line
// (exact for ranges; for sections and marker-free files a best effort).
func fileLine(inc Include, n int) string {
	if inc.Start > 0 {
		return fmt.Sprintf("%s:%d", inc.Path, inc.Start+n-1)
	}
	if inc.Section != "" {
		return fmt.Sprintf("line %d of section %s", n, inc.Section)
	}
	return fmt.Sprintf("%s:%d", inc.Path, n)
}

func quoteEOF(s string, eof bool) string {
	if eof {
		return "(end of include)"
	}
	return s
}

// Render returns page with every include line replaced by the lines it
// selects, each prefixed with the include line's indentation (empty lines
// stay empty). Any problem fails the whole render, with every problem listed.
func Render(name string, page []byte, src Source) ([]byte, error) {
	incs, err := Parse(name, page)
	if err != nil {
		return nil, err
	}
	byLine := map[int]Include{}
	for _, inc := range incs {
		byLine[inc.Line] = inc
	}
	var errs Errors
	var b strings.Builder
	lines := strings.Split(string(page), "\n")
	for i, line := range lines {
		inc, ok := byLine[i+1]
		if !ok {
			b.WriteString(line)
			if i < len(lines)-1 {
				b.WriteByte('\n')
			}
			continue
		}
		data, err := read(src, inc.Path)
		var got []string
		if err == nil {
			got, err = Extract(inc, data)
		}
		if err != nil {
			errs = append(errs, &Error{Page: name, Line: inc.Line, Spec: inc.Spec, Msg: err.Error()})
			continue
		}
		for j, l := range got {
			if l != "" {
				b.WriteString(inc.Indent)
				b.WriteString(l)
			}
			if j < len(got)-1 || i < len(lines)-1 {
				b.WriteByte('\n')
			}
		}
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return []byte(b.String()), nil
}
