package noderuntime

import (
	"os"
	"testing"

	"github.com/dshsim/dshsim/sandbox/sandboxtest"
)

func TestMain(m *testing.M) { os.Exit(sandboxtest.Main(m)) }

// provider is the real provider with backend as its only candidate; it
// skips the test when the backend cannot confine here.
var provider = sandboxtest.Provider

// varTmpDir is a fresh directory under /var/tmp: a workspace must not live
// under /tmp, which workspace-write grants (Landlock) or replaces (bwrap).
var varTmpDir = sandboxtest.TempDir
