package compile

import (
	"strings"

	"github.com/evanw/esbuild/pkg/api"
)

// Wrapper opens the function every program is the body of; Closer ends it.
const (
	Wrapper = "async function __dsh_program__() {\n"
	Closer  = "\n}"
)

// Error is a program that does not compile: invalid syntax or syntax that
// is not erasable.
type Error struct {
	// Text is the one-line reason, the whole diagnostic the model sees.
	Text string
	// Line is 1-based and counts the wrapper line; Column is 0-based, in bytes.
	Line, Column int
}

// Error returns the reason alone, as Node's stripTypeScriptTypes (22.19 and
// later, upstream's range) words its error message: no source frame.
func (e *Error) Error() string { return e.Text }

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
			return "", &Error{Text: m.Text}
		}
		return "", &Error{Text: m.Text, Line: m.Location.Line, Column: m.Location.Column}
	}
	if f := findNonErasable(src); f != nil {
		return "", &Error{Text: f.text, Line: f.line, Column: f.col}
	}
	out := string(r.Code)
	if !strings.HasPrefix(out, Wrapper) || !strings.HasSuffix(out, "}\n") {
		return "", &Error{Text: "esbuild returned an unexpected shape for the program wrapper"}
	}
	return out[len(Wrapper) : len(out)-len("}\n")], nil
}
