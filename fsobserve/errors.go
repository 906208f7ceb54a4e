package fsobserve

import (
	"errors"
	"fmt"
	"io/fs"
	"syscall"

	"github.com/dshsim/dshsim/pipeline"
)

// ErrorName is the Name of every coded error this package returns.
const ErrorName = "FsError"

// The FS_* codes. pipeline.CodeOf on any error of this package yields
// {"FsError", <one of these>}.
const (
	CodeNotFound         = "FS_NOT_FOUND"
	CodeNotRegularFile   = "FS_NOT_REGULAR_FILE"
	CodeNotText          = "FS_NOT_TEXT"
	CodeNotObserved      = "FS_NOT_OBSERVED"
	CodeStaleVersion     = "FS_STALE_VERSION"
	CodeEditNotFound     = "FS_EDIT_NOT_FOUND"
	CodeAmbiguousEdit    = "FS_AMBIGUOUS_EDIT"
	CodeAborted          = "FS_ABORTED"
	CodeIOError          = "FS_IO_ERROR"
	CodePermissionDenied = "FS_PERMISSION_DENIED"
	CodeSandboxDenied    = "FS_SANDBOX_DENIED"
	CodeTooLarge         = "FS_TOO_LARGE"
)

// Errorf returns an FsError with the given code and formatted message.
func Errorf(code, format string, args ...any) *pipeline.Error {
	return pipeline.NewErrorf(ErrorName, code, format, args...)
}

// ErrAborted returns the FS_ABORTED error ("write aborted").
func ErrAborted(cause error) *pipeline.Error {
	e := pipeline.NewError(ErrorName, CodeAborted, "write aborted")
	e.Cause = cause
	return e
}

// ioError maps an OS error met while doing op ("read", "write", "edit",
// "resolve") on display path d to a coded error; coded errors pass through.
func ioError(op, d string, err error) error {
	if err == nil {
		return nil
	}
	if _, _, ok := pipeline.CodeOf(err); ok {
		return err
	}
	var e *pipeline.Error
	switch {
	case errors.Is(err, fs.ErrPermission), errors.Is(err, syscall.EPERM):
		e = Errorf(CodePermissionDenied, "cannot %s %q: permission denied", op, d)
	case errors.Is(err, fs.ErrNotExist):
		e = Errorf(CodeNotFound, "cannot %s %q: not found", op, d)
	default:
		e = Errorf(CodeIOError, "cannot %s %q: %s", op, d, errnoText(err))
	}
	e.Cause = err
	return e
}

func errnoText(err error) string {
	var en syscall.Errno
	if errors.As(err, &en) {
		return en.Error()
	}
	return fmt.Sprint(err)
}
