package compile

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/evanw/esbuild/pkg/api"
)

// Wrapper opens the function every program is the body of; Closer ends it.
const (
	Wrapper = "async function __dsh_program__() {\n"
	Closer  = "\n}"
)

// Error is a program that does not compile: invalid syntax or syntax that
// is not erasable. Message is the framed diagnostic.
type Error struct {
	// Text is the one-line reason.
	Text string
	// Line is 1-based and counts the wrapper line; Column is 0-based, in bytes.
	Line, Column int
	// Message is the framed diagnostic the model sees.
	Message string
}

// Error returns the framed diagnostic.
func (e *Error) Error() string { return e.Message }

// Compile returns the JavaScript body of code, ready for an AsyncFunction.
func Compile(code string) (string, error) {
	src := Wrapper + code + Closer
	r := api.Transform(src, api.TransformOptions{
		Loader:  api.LoaderTS,
		Target:  api.ESNext,
		Charset: api.CharsetUTF8,
	})
	if len(r.Errors) > 0 {
		m := r.Errors[0]
		if m.Location == nil {
			return "", &Error{Text: m.Text, Message: "  x " + m.Text}
		}
		l := m.Location
		return "", newError(m.Text, l.Line, l.Column, max(l.Length, 1), l.LineText)
	}
	if f := findNonErasable(src); f != nil {
		return "", newError(f.text, f.line, f.col, f.length, lineAt(src, f.line))
	}
	out := string(r.Code)
	if !strings.HasPrefix(out, Wrapper) || !strings.HasSuffix(out, "}\n") {
		return "", &Error{Text: "esbuild returned an unexpected shape", Message: "  x esbuild returned an unexpected shape for the program wrapper"}
	}
	return out[len(Wrapper) : len(out)-len("}\n")], nil
}

func lineAt(src string, line int) string {
	lines := strings.Split(src, "\n")
	if line < 1 || line > len(lines) {
		return ""
	}
	return lines[line-1]
}

// newError frames a diagnostic like Node's strip-only errors (SWC's
// graphical report): "  x <text>", the source line with its number, and
// carets under the span.
func newError(text string, line, col, length int, lineText string) *Error {
	num := strconv.Itoa(line)
	pad := strings.Repeat(" ", len(num)+2)
	col = min(max(col, 0), len(lineText))
	lead := utf8.RuneCountInString(lineText[:col])
	end := min(col+length, len(lineText))
	width := max(utf8.RuneCountInString(lineText[col:end]), 1)
	msg := fmt.Sprintf("  x %s\n%s,----\n %s | %s\n%s: %s%s\n%s`----", text, pad, num, lineText, pad, strings.Repeat(" ", lead), strings.Repeat("^", width), pad)
	return &Error{Text: text, Line: line, Column: col, Message: msg}
}
