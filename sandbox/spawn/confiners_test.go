package spawn_test

import (
	"github.com/dshsim/dshsim/sandbox"
	"github.com/dshsim/dshsim/sandbox/chain"
	"github.com/dshsim/dshsim/sandbox/inproc"
	"github.com/dshsim/dshsim/sandbox/spawn"
)

// The confiners of this module, checked at compile time: the provider (argv
// wrapped for bwrap, the runner and the other platforms), the in-process
// launcher and the stack's chain of both. spawn.Confiner is closed to the
// sandbox tree (its Sealed method), so these are all there is.
var (
	_ spawn.Confiner = (*sandbox.Provider)(nil)
	_ spawn.Confiner = (*inproc.Launcher)(nil)
	_ spawn.Confiner = (*chain.Confiner)(nil)
)
