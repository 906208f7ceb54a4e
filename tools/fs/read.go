package fs

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf16"

	"github.com/dshsim/dshsim/fsobserve"
	"github.com/dshsim/dshsim/pipeline"
)

// ReadLine is one returned line.
type ReadLine struct {
	Number int    `json:"number"`
	Text   string `json:"text"`
}

// ReadValue is read's canonical value.
type ReadValue struct {
	Path       string     `json:"path"`
	Offset     int        `json:"offset"`
	Lines      []ReadLine `json:"lines"`
	TotalLines int        `json:"totalLines"`
}

// ReadMeta is read's persisted meta: the value plus lang for known extensions.
type ReadMeta struct {
	ReadValue
	Lang string `json:"lang,omitempty"`
}

// Window is the line-selection state of one read.
type Window struct {
	// Offset (1-based), Limit, MaxLineLength (UTF-16 units) and MaxBytes bound the selection.
	Offset, Limit, MaxLineLength, MaxBytes int
	// Lines are the selected lines; Total counts every line of the file.
	Lines []ReadLine
	Total int
	// Capped is set when the byte budget stopped the selection.
	Capped bool
	bytes  int
}

// Add feeds the next line of the file.
func (w *Window) Add(l fsobserve.Line) {
	w.Total++
	if w.Total < w.Offset || len(w.Lines) >= w.Limit || w.Capped {
		return
	}
	text := truncateLine(l, w.MaxLineLength)
	cost := len(text)
	if len(w.Lines) > 0 {
		cost++
	}
	if w.bytes+cost > w.MaxBytes {
		w.Capped = true
		return
	}
	w.bytes += cost
	w.Lines = append(w.Lines, ReadLine{Number: w.Total, Text: text})
}

// EndLine is the last selected line number, or Offset-1 when none.
func (w *Window) EndLine() int {
	if len(w.Lines) == 0 {
		return w.Offset - 1
	}
	return w.Lines[len(w.Lines)-1].Number
}

// Footer returns the VERBATIM footer (first match wins: capped, more, EOF).
func (w *Window) Footer() string {
	end := w.EndLine()
	switch {
	case len(w.Lines) < w.Limit && end < w.Total:
		return fmt.Sprintf("(Output capped. Showing lines %d-%d. Use offset=%d to continue.)", w.Offset, end, end+1)
	case end < w.Total:
		return fmt.Sprintf("(Showing lines %d-%d of %d. Use offset=%d to continue.)", w.Offset, end, w.Total, end+1)
	default:
		return fmt.Sprintf("(End of file - total %d lines)", w.Total)
	}
}

// Body renders the numbered lines, a blank line and the footer (just the
// footer when no line is selected).
func (w *Window) Body() string {
	if len(w.Lines) == 0 {
		return w.Footer()
	}
	var b strings.Builder
	for i, l := range w.Lines {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(strconv.Itoa(l.Number))
		b.WriteString(": ")
		b.WriteString(l.Text)
	}
	b.WriteString("\n\n")
	b.WriteString(w.Footer())
	return b.String()
}

// truncateLine cuts a line to max UTF-16 units (never splitting a surrogate
// pair: Go strings stay valid UTF-8) and appends the truncation suffix.
func truncateLine(l fsobserve.Line, max int) string {
	units, cut := 0, -1
	for i, r := range l.Text {
		u := utf16.RuneLen(r)
		if units+u > max {
			cut = i
			break
		}
		units += u
	}
	if cut < 0 && !l.Over {
		return l.Text
	}
	if cut < 0 {
		cut = len(l.Text)
	}
	return l.Text[:cut] + fmt.Sprintf("... (line truncated to %d chars)", max)
}

func (t *Tools) runRead(ctx context.Context, call *pipeline.Call) (pipeline.Output, error) {
	a, path, err := fileArgs(call)
	if err != nil {
		return pipeline.Output{}, err
	}
	offset, err := a.positiveInt("offset", 1)
	if err != nil {
		return pipeline.Output{}, err
	}
	limit, err := a.positiveInt("limit", t.cfg.ReadLimit)
	if err != nil {
		return pipeline.Output{}, err
	}
	if limit > t.cfg.ReadLimit {
		return pipeline.Output{}, fmt.Errorf("limit must be less than or equal to %d", t.cfg.ReadLimit)
	}
	fs := t.cfg.FS
	target, err := fs.Resolve(path, t.sessionCwd(call, path))
	if err != nil {
		return pipeline.Output{}, err
	}
	session := call.SessionID()
	info, exists, err := fs.Stat(target)
	if err != nil {
		return pipeline.Output{}, err
	}
	if !exists {
		t.record(session, target.Key, fsobserve.Absent())
		return pipeline.Output{}, fsobserve.Errorf(fsobserve.CodeNotFound, "cannot read %q: not found", target.Display)
	}
	if info.Kind != fsobserve.KindFile {
		return pipeline.Output{}, fsobserve.Errorf(fsobserve.CodeNotRegularFile, "cannot read %q: not a regular file", target.Display)
	}
	f, err := fs.Open(target)
	if err != nil {
		return pipeline.Output{}, err
	}
	defer f.Close()
	w := &Window{Offset: offset, Limit: limit, MaxLineLength: t.cfg.ReadMaxLineLength, MaxBytes: t.cfg.ReadMaxBytes}
	if err := fsobserve.ScanLines(ctx, f, target.Display, t.cfg.ReadMaxLineLength, w.Add); err != nil {
		return pipeline.Output{}, err
	}
	if !w.Capped && offset > w.Total && !(w.Total == 0 && offset == 1) {
		return pipeline.Output{}, fsobserve.Errorf(fsobserve.CodeNotFound, "offset %d is out of range for %q (%d lines)", offset, target.Display, w.Total)
	}
	t.record(session, target.Key, fsobserve.Present(info.Version))
	lines := w.Lines
	if lines == nil {
		lines = []ReadLine{}
	}
	v := ReadValue{Path: target.Display, Offset: offset, Lines: lines, TotalLines: w.Total}
	return pipeline.Output{
		Value:   marshal(v),
		Content: []pipeline.Block{pipeline.TextBlock(fileEnvelope(target.Display, w.Body()))},
		Meta:    marshal(ReadMeta{ReadValue: v, Lang: LangFromPath(target.Display)}),
	}, nil
}

func (t *Tools) record(session, key string, obs fsobserve.Observation) {
	if t.cfg.Observations != nil {
		t.cfg.Observations.Record(session, key, obs)
	}
}
