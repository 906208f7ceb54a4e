package stack

import (
	"fmt"

	"github.com/dshsim/dshsim/fsobserve"
	"github.com/dshsim/dshsim/tools/fs"
	"github.com/dshsim/dshsim/tools/toolreg"
)

// fileTools composes the file tools: read, write and edit on the local
// provider, with read-before-write observation, confining (fenced by the
// call's sandbox mode, escalation advertised) as in upstream's snapshot
// deployment; with Config.Images also read_image (the file tools' own,
// sharing their read target and observations). Config.Without can leave
// read, write and edit out, or the confinement.
func (s *Stack) fileTools() ([]toolreg.Tool, error) {
	opts := []fsobserve.Option{fsobserve.WithCwd(s.cfg.Workspace)}
	if s.cfg.Files.DiffBasisMaxBytes > 0 {
		opts = append(opts, fsobserve.WithDiffBasisMaxBytes(s.cfg.Files.DiffBasisMaxBytes))
	}
	local, err := fsobserve.NewLocal(opts...)
	if err != nil {
		return nil, fmt.Errorf("file provider: %w", err)
	}
	images, err := s.imageConfig()
	if err != nil {
		return nil, err
	}
	cfg := fs.Config{
		FS:           local,
		Observations: s.observations(),
		Policy:       s.policyFor,
		Escalate:     s.escalate,
		Images:       images,
	}
	if s.cfg.Without.Policy {
		cfg.Policy, cfg.Escalate = nil, nil // no sandbox policy: not confining
	}
	tools, err := fs.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("file tools: %w", err)
	}
	return tools, nil
}
