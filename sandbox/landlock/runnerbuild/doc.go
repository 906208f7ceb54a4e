// Package runnerbuild builds the landlock-run binary from this module's
// source for tests, benchmarks and sims (binaries are never committed).
//
// # Build
//
// [Build] runs the go tool with CGO_ENABLED=0, -trimpath and -ldflags "-s -w":
// a small static binary, which starts fastest and also runs in an initramfs
// without a libc.
package runnerbuild
