package pipeline

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Error codes and names of the errors the pipeline itself raises.
const (
	// CodeAbortedBeforeDispatch is the code of a call cancelled before its body ran.
	CodeAbortedBeforeDispatch = "ABORTED_BEFORE_DISPATCH"
	// CodeAborted is the code of a call cancelled after its body started.
	CodeAborted = "ABORTED"
	// CodeUnknownTool is the code of a call to a tool that is not registered.
	CodeUnknownTool = "UNKNOWN_TOOL"
	// CodeToolTimeout is the code of a call the timeout wrapper stopped.
	CodeToolTimeout = "TOOL_TIMEOUT"
	// CodeInvalidArgs is the code of argument validation failures.
	CodeInvalidArgs = "INVALID_ARGS"
)

// VERBATIM model-facing messages (upstream's).
const (
	// MsgAbortedBeforeDispatch is the message of [ErrAbortedBeforeDispatch].
	MsgAbortedBeforeDispatch = "tool call aborted before dispatch"
	// MsgAborted is the message of [ErrAborted].
	MsgAborted = "tool call aborted"
	// MsgArgsNotLossless is the message of a call whose arguments are not
	// lossless JSON ([LosslessArgs]); it carries no code.
	MsgArgsNotLossless = "tool execution arguments must be losslessly JSON-serializable"
	// MsgBlockedByPost is the message of a post-execute block with no text feedback.
	MsgBlockedByPost = "tool result blocked by post-execute policy"
)

// ErrAbortedBeforeDispatch is the error of a call cancelled before its body ran.
var ErrAbortedBeforeDispatch = &Error{Name: "AbortError", Code: CodeAbortedBeforeDispatch, Message: MsgAbortedBeforeDispatch}

// ErrAborted is the error of a call cancelled after its body started.
var ErrAborted = &Error{Name: "AbortError", Code: CodeAborted, Message: MsgAborted}

// UnknownToolError returns the VERBATIM `unknown tool "<name>"` error (ToolNotFoundError/UNKNOWN_TOOL).
func UnknownToolError(name string) error {
	return NewError("ToolNotFoundError", CodeUnknownTool, fmt.Sprintf("unknown tool %q", name))
}

// TimeoutError returns the VERBATIM `tool call timed out after <ms>ms` error (ToolTimeoutError/TOOL_TIMEOUT).
func TimeoutError(ms int64) error {
	return NewError("ToolTimeoutError", CodeToolTimeout, fmt.Sprintf("tool call timed out after %dms", ms))
}

// InvalidArgsError returns `invalid arguments: <violations joined by "; ">` (ToolArgsError/INVALID_ARGS).
func InvalidArgsError(violations ...string) error {
	msg := "invalid arguments: "
	for i, v := range violations {
		if i > 0 {
			msg += "; "
		}
		msg += v
	}
	return NewError("ToolArgsError", CodeInvalidArgs, msg)
}

// ErrorResult returns the failure result of err: one text block "Error: <message>",
// error.message = <message>, error.info = {name, code} only for coded errors.
func ErrorResult(err error) Result {
	msg := ErrorMessage(err)
	r := Result{IsError: true, Content: []Block{TextBlock("Error: " + msg)}, Error: &ResultError{Message: msg}}
	if name, code, ok := CodeOf(err); ok {
		r.Error.Info = &ErrorInfo{Name: name, Code: code}
	}
	return r
}

// denialResult is the failure result of a deny decision or a guard reason.
func denialResult(reason string, info *ErrorInfo) Result {
	r := Result{IsError: true, Content: []Block{TextBlock("Error: " + reason)}, Error: &ResultError{Message: reason}}
	if info != nil {
		i := *info
		r.Error.Info = &i
	}
	return r
}

// panicError turns a recovered panic value into an error whose message follows
// upstream's extraction: an error's message, a string as is, else its printed
// form, and "<unprintable thrown value>" when printing itself panics.
func panicError(stage string, v any) (err error) {
	defer func() {
		if recover() != nil {
			err = errors.New("<unprintable thrown value>")
		}
	}()
	switch x := v.(type) {
	case error:
		return &panicked{stage: stage, err: x}
	case string:
		return &panicked{stage: stage, err: errors.New(x)}
	case fmt.Stringer:
		return &panicked{stage: stage, err: errors.New(x.String())}
	default:
		msg := fmt.Sprint(x)
		if strings.Contains(msg, "%!v(PANIC=") {
			msg = "<unprintable thrown value>"
		}
		return &panicked{stage: stage, err: errors.New(msg)}
	}
}

// panicked is a recovered panic; it renders as the panic's own message so the
// model sees what upstream shows for a throw, and unwraps to the cause so coded
// errors keep their info.
type panicked struct {
	stage string
	err   error
}

func (p *panicked) Error() string { return ErrorMessage(p.err) }
func (p *panicked) Unwrap() error { return p.err }

// unreachable is the exhaustiveness-guard error for an outcome outside a closed set.
func unreachable(union string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		b = []byte(fmt.Sprintf("%q", fmt.Sprint(v)))
	}
	return fmt.Errorf("unreachable variant in %s: %s", union, b)
}
