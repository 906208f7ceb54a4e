// Package herr holds the coded error type shared by every layer of the stack.
//
// Upstream renders every thrown error to the model as "Error: <message>" and, only
// when the error carries a code, records {name, code} beside the result. An
// [*Error] is such a code-carrying error; a plain Go error renders its message
// and carries no info.
package herr
