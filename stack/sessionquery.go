package stack

import (
	"fmt"

	"github.com/dshsim/dshsim/tools/sessionquery"
)

// session_event_read and session_event_search over the session log, when
// the deployment mounts them (upstream's session-query overlay); their
// results are ordinary text results, so the spill policy bounds them.
func init() {
	toolBuilders = append(toolBuilders, func(p *parts) error {
		if !p.cfg.SessionQuery {
			return nil
		}
		for _, t := range sessionquery.Tools(sessionquery.Config{}) {
			if _, err := p.reg.Register(t); err != nil {
				return fmt.Errorf("stack: register %s: %w", t.Name, err)
			}
		}
		return nil
	})
}
