package inproc

import (
	"os"
	"testing"

	"github.com/dshsim/dshsim/sandbox/sandboxtest"
)

func TestMain(m *testing.M) {
	if cfg := os.Getenv(agentEnv); cfg != "" {
		os.Exit(agentMain(cfg))
	}
	os.Exit(sandboxtest.Main(m))
}
