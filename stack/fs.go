package stack

import (
	"fmt"

	"github.com/dshsim/dshsim/fsobserve"
	"github.com/dshsim/dshsim/tools/fs"
)

// addFS composes the file tools: read, write and edit on the local
// provider, with read-before-write observation, confining (fenced by the
// call's sandbox mode, escalation advertised) as in upstream's snapshot
// deployment.
func (s *Stack) addFS() error {
	opts := []fsobserve.Option{fsobserve.WithCwd(s.cfg.Workspace)}
	if s.cfg.DiffBasisMaxBytes > 0 {
		opts = append(opts, fsobserve.WithDiffBasisMaxBytes(s.cfg.DiffBasisMaxBytes))
	}
	local, err := fsobserve.NewLocal(opts...)
	if err != nil {
		return fmt.Errorf("stack: file provider: %w", err)
	}
	tools, err := fs.New(fs.Config{
		FS:           local,
		Observations: fsobserve.NewObservations(),
		Policy:       s.policyFor,
		Escalate:     s.escalate,
	})
	if err != nil {
		return fmt.Errorf("stack: file tools: %w", err)
	}
	return s.register(tools.All()...)
}
