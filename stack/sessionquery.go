package stack

import "github.com/dshsim/dshsim/tools/sessionquery"

// addSessionQuery composes session_event_read and session_event_search over
// the session log when the deployment mounts them (upstream's session-query
// overlay, Config.SessionQuery); their results are ordinary text results,
// so the spill policy bounds them.
func (s *Stack) addSessionQuery() error {
	if !s.cfg.SessionQuery {
		return nil
	}
	return s.register(sessionquery.Tools(sessionquery.Config{})...)
}
