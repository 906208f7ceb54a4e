package jobs

import (
	"io"

	"github.com/dshsim/dshsim/render"
	"github.com/dshsim/dshsim/sandbox"
)

// Failed returns a spawner whose process never ran: it writes
// "spawn failed: <err>" to stderr and settles at once as killed before exit
// with the given sandbox facts (a runner that could not be started).
func Failed(err error, sb *sandbox.Report) Spawner {
	return func(stdout, stderr io.Writer) (Process, error) {
		io.WriteString(stderr, "spawn failed: "+err.Error())
		return failedProc{sb: sb, err: err}, nil
	}
}

type failedProc struct {
	sb  *sandbox.Report
	err error
}

func (f failedProc) Wait() Settled {
	return Settled{Outcome: render.Outcome{Killed: true}, Sandbox: f.sb, Err: f.err}
}

func (failedProc) Kill() {}
