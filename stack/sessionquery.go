package stack

import (
	"github.com/dshsim/dshsim/tools/sessionquery"
	"github.com/dshsim/dshsim/tools/toolreg"
)

// addSessionQuery composes session_event_read and session_event_search over
// the session log when the deployment mounts them (upstream's session-query
// overlay, Config.SessionQuery), over the stored sessions of this workspace
// too (Config.SessionStore); their results are ordinary text results, so
// the spill policy bounds them.
func (s *Stack) addSessionQuery() error {
	if !s.cfg.SessionQuery {
		return nil
	}
	var cfg sessionquery.Config
	if s.cfg.SessionStore != "" {
		cfg.Sessions = sessionquery.Store(s.cfg.SessionStore)
	}
	regs, err := sessionquery.New(cfg)
	if err != nil {
		return err
	}
	return s.register(toolreg.Defs(regs...)...)
}
