package sandbox_test

import (
	"testing"

	"github.com/dshsim/dshsim/sandbox"
	"github.com/dshsim/dshsim/sandbox/sandboxtest"
)

// BenchmarkValidate is the one check of a workspace-write call, as every
// confiner makes it per call.
func BenchmarkValidate(b *testing.B) {
	ws := sandboxtest.TempDir(b, "dshsim-bench-ws-")
	p := sandbox.Policy{Mode: sandbox.WorkspaceWrite, WorkspaceRoot: ws}
	for b.Loop() {
		if _, err := sandbox.Validate([]string{"/bin/true"}, p); err != nil {
			b.Fatal(err)
		}
	}
}
