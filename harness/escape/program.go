package escape

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/dshsim/dshsim/sandbox"
	"github.com/dshsim/dshsim/tools/code/noderuntime"
)

// NodeFor returns run_code's Node runtime (upstream's limits) when attempts
// hold a program, nil when they hold none. A runtime that cannot be made
// (no node) is an error: the program attempts would otherwise read n/a.
func NodeFor(attempts []Attempt) (*noderuntime.Runtime, error) {
	for _, a := range attempts {
		if a.Program {
			rt, err := noderuntime.New(noderuntime.Config{})
			if err != nil {
				return nil, fmt.Errorf("run_code's runtime for the program attempts: %w", err)
			}
			return rt, nil
		}
	}
	return nil, nil
}

// runProgram runs a program attempt as run_code runs a program: the
// runtime starts node through spawn under the backend's confiner (the
// channel on descriptor 3, never its stdout), with $WS, $OUT and $TARGET of
// the program's text replaced by the paths. It reports what a script run
// reports: an exit status (0 when the program completed, 1 when it failed),
// its output (the logs and the value) and the failure as stderr. A
// *sandbox.UnavailableError is a runner that failed before node started.
func runProgram(ctx context.Context, rt *noderuntime.Runtime, a Attempt, b Backend, m sandbox.Mode, ws, out, target string, env []string, timeout time.Duration) (exit int, stdout, stderr string, err error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	program := strings.NewReplacer("$WS", ws, "$OUT", out, "$TARGET", target).Replace(a.Script)
	res, err := rt.Run(ctx, noderuntime.Request{Code: program, Policy: sandbox.Policy{Mode: m, WorkspaceRoot: ws}, Confiner: b.Confiner, Dir: ws, Env: env})
	if err != nil {
		return 0, "", "", err
	}
	stdout = strings.Join(append(res.Logs, string(res.Value)), "\n")
	if res.Error != nil {
		return 1, stdout, res.Error.Kind + ": " + res.Error.Message, nil
	}
	return 0, stdout, "", nil
}
