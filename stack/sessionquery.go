package stack

import (
	"github.com/dshsim/dshsim/tools/sessionquery"
	"github.com/dshsim/dshsim/tools/toolreg"
)

// sessionQueryTools composes session_event_read and session_event_search
// over the session log when the deployment mounts them (upstream's
// session-query overlay, Config.SessionQuery), over the stored sessions of
// this workspace too (SessionQueryConfig.Store); their results are ordinary text
// results, so the spill policy bounds them.
func (s *Stack) sessionQueryTools() ([]toolreg.Tool, error) {
	var cfg sessionquery.Config
	if st := s.cfg.SessionQuery.Store; st != "" {
		cfg.Sessions = sessionquery.Store(st)
	}
	return sessionquery.New(cfg)
}
