// Package seal closes an interface to the sandbox tree: a method whose
// parameter is a [Token] can be declared only where this package can be
// imported (Go's internal rule: under sandbox/). Elsewhere a type gets such
// a method only by embedding a value that has it.
package seal

// Token is the parameter type of a sealing method.
type Token struct{}
