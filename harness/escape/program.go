package escape

import (
	"context"
	"errors"
	"strconv"
	"strings"

	"github.com/dshsim/dshsim/sandbox"
	"github.com/dshsim/dshsim/tools/code/noderuntime"
)

// programConfiner confines run_code's Node child through a corpus backend;
// for the unprivileged identity it starts the runner as that user through
// setpriv, as the scripts are started with switched credentials.
type programConfiner struct {
	b  Backend
	id Identity
}

func (c programConfiner) Confine(ctx context.Context, argv []string, p sandbox.Policy) (sandbox.ConfinedArgv, error) {
	w, err := c.b.Confine(ctx, p.Mode, p.WorkspaceRoot, argv)
	if err != nil || !c.id.Switch {
		return w, err
	}
	w.Argv = append([]string{"setpriv", "--reuid", strconv.Itoa(c.id.UID), "--regid", strconv.Itoa(c.id.GID), "--clear-groups", "--"}, w.Argv...)
	return w, nil
}

// runProgram runs a program attempt with the runtime; it reports what a
// script run reports: an exit status (0 when the program completed, 1 when
// it failed), its output (the logs and the value) and the failure as stderr.
// A runner that failed before node started is a runner failure.
func runProgram(ctx context.Context, rt *noderuntime.Runtime, a Attempt, b Backend, id Identity, m sandbox.Mode, ws, out, target string) (exit int, stdout, stderr string, runnerFailed string, err error) {
	program := strings.NewReplacer("$WS", ws, "$OUT", out, "$TARGET", target).Replace(a.Script)
	res, err := rt.Run(ctx, noderuntime.Request{Code: program, Policy: sandbox.Policy{Mode: m, WorkspaceRoot: ws}, Confiner: programConfiner{b, id}, Dir: ws})
	var ue *sandbox.UnavailableError
	if errors.As(err, &ue) {
		return 0, "", "", ue.Error(), nil
	}
	if err != nil {
		return 0, "", "", "", err
	}
	stdout = strings.Join(append(res.Logs, string(res.Value)), "\n")
	if res.Error != nil {
		return 1, stdout, res.Error.Kind + ": " + res.Error.Message, "", nil
	}
	return 0, stdout, "", "", nil
}
