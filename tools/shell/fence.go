package shell

import (
	"encoding/json"
	"fmt"

	"github.com/dshsim/dshsim/pipeline/session"
	"github.com/dshsim/dshsim/sandbox"
)

// fenceError is upstream's refusal of a sandbox/mode change while the
// agent's persistent shell is open (terminal-bash's sandbox-mode fence;
// VERBATIM).
func fenceError(from, to string) error {
	return fmt.Errorf(`cannot change sandbox mode from "%s" to "%s" while persistent terminal sessions are open or being created; wait for creation to settle and close them first`, from, to)
}

// fenceCheck is the session check an open shell holds on its agent's log:
// a sandbox/mode event whose mode differs from the mode in force is
// refused (the log does not change). The mode in force is the log's last
// sandbox/mode, else started, the mode the shell was started under (the
// deployment's default then). A log that cannot be read refuses too.
func fenceCheck(log *session.Log, started sandbox.Mode) session.Check {
	return func(typ string, data json.RawMessage) error {
		if typ != session.KindSandboxMode {
			return nil
		}
		var d struct {
			Mode string `json:"mode"`
		}
		if err := json.Unmarshal(data, &d); err != nil {
			return fmt.Errorf("%s: %w", session.KindSandboxMode, err)
		}
		events, err := log.Events()
		if err != nil {
			return err
		}
		current := string(started)
		if m, ok := session.LastField(events, session.KindSandboxMode, "mode"); ok {
			current = m
		}
		if d.Mode == current {
			return nil
		}
		return fenceError(current, d.Mode)
	}
}
