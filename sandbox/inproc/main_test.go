package inproc

import (
	"os"
	"testing"

	"github.com/dshsim/dshsim/sandbox/sandboxtest"
)

func TestMain(m *testing.M) { os.Exit(sandboxtest.Main(m)) }
