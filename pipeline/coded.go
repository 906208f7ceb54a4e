package pipeline

import (
	"errors"
	"fmt"
)

// Error is a code-carrying error (upstream's HarnessError family).
type Error struct {
	// Name is the error class name, e.g. "FsError" or "SandboxUnavailableError".
	Name string
	// Code is the stable machine code, e.g. "FS_NOT_OBSERVED".
	Code string
	// Message is the model-facing message (without the "Error: " prefix).
	Message string
	// Cause is an optional wrapped error.
	Cause error
}

// NewError returns a coded error.
func NewError(name, code, message string) *Error {
	return &Error{Name: name, Code: code, Message: message}
}

// NewErrorf returns a coded error with a formatted message.
func NewErrorf(name, code, format string, args ...any) *Error {
	return &Error{Name: name, Code: code, Message: fmt.Sprintf(format, args...)}
}

// Error returns the message.
func (e *Error) Error() string { return e.Message }

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Cause }

// Coded is implemented by error types that carry a name and a code without
// being an [*Error] (for example sandbox.UnavailableError).
type Coded interface {
	error
	Name() string
	Code() string
}

// CodeOf returns the name and code of the first coded error in err's chain:
// an [*Error] or any [Coded] error.
func CodeOf(err error) (name, code string, ok bool) {
	for e := err; e != nil; e = errors.Unwrap(e) {
		switch v := e.(type) {
		case *Error:
			return v.Name, v.Code, true
		case Coded:
			return v.Name(), v.Code(), true
		}
	}
	return "", "", false
}

// HasCode reports whether err's chain holds a coded error with this code.
func HasCode(err error, code string) bool {
	_, c, ok := CodeOf(err)
	return ok && c == code
}

// ErrorMessage extracts the model-facing message of any error value; a nil error
// gives "<nil>", a panicking Error method gives "<unprintable thrown value>".
func ErrorMessage(err error) (msg string) {
	if err == nil {
		return "<nil>"
	}
	defer func() {
		if recover() != nil {
			msg = "<unprintable thrown value>"
		}
	}()
	return err.Error()
}
