// Package chaintest is test support for the stack's default Landlock path:
// [Landlock] is package sandbox/chain as a host without bwrap gets it. Only
// _test.go files and harness/ import it.
package chaintest

import (
	"testing"

	"github.com/dshsim/dshsim/sandbox"
	"github.com/dshsim/dshsim/sandbox/chain"
	"github.com/dshsim/dshsim/sandbox/sandboxtest"
)

// Landlock is the stack's default Landlock path on a host without bwrap:
// package sandbox/chain with Landlock as its only candidate (applied in this
// process, threads reused; the runner sandboxtest.Runner built as its
// fallback), configured further by cfg (ABI cap, hardening). It skips t
// without Landlock and fails it when the in-process path is not what runs.
func Landlock(t testing.TB, cfg sandbox.Config) *chain.Confiner {
	t.Helper()
	sandboxtest.RequireLandlock(t, 1)
	cfg.Platform, cfg.Chain, cfg.LauncherPath = "linux", []string{sandbox.BackendLandlock}, sandboxtest.Runner(t)
	c, err := chain.New(chain.Config{Sandbox: cfg})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if why := c.Fallback(); why != "" {
		t.Fatalf("the default Landlock path falls back to the runner: %s", why)
	}
	return c
}
