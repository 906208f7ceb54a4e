package stack

import (
	"fmt"

	"github.com/dshsim/dshsim/fsobserve"
	"github.com/dshsim/dshsim/tools/fs"
)

// The file tools: read, write and edit on the local provider, with
// read-before-write observation, confining (fenced by the call's sandbox mode,
// escalation advertised) as in upstream's snapshot deployment.
func init() {
	toolBuilders = append(toolBuilders, func(p *parts) error {
		opts := []fsobserve.Option{fsobserve.WithCwd(p.cfg.Workspace)}
		if p.cfg.DiffBasisMaxBytes > 0 {
			opts = append(opts, fsobserve.WithDiffBasisMaxBytes(p.cfg.DiffBasisMaxBytes))
		}
		local, err := fsobserve.NewLocal(opts...)
		if err != nil {
			return fmt.Errorf("stack: file provider: %w", err)
		}
		tools, err := fs.New(fs.Config{
			FS:           local,
			Observations: fsobserve.NewObservations(),
			Policy:       p.policyFor,
			Escalate:     p.escalate,
		})
		if err != nil {
			return fmt.Errorf("stack: file tools: %w", err)
		}
		for _, t := range tools.All() {
			if _, err := p.reg.Register(t); err != nil {
				return fmt.Errorf("stack: register %s: %w", t.Name, err)
			}
		}
		return nil
	})
}
