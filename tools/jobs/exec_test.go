package jobs

// A plain process for the registry's own tests (the bash tool starts its
// processes with sandbox/spawn).

import (
	"errors"
	"io"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/dshsim/dshsim/render"
	"github.com/dshsim/dshsim/sandbox"
)

// DefaultGrace is the SIGTERM to SIGKILL grace period.
const DefaultGrace = 3 * time.Second

// ExecSpec describes a plain process (no sandbox wrapping of its own: argv
// is run as given, so a confined run passes the provider's wrapped argv).
type ExecSpec struct {
	// Argv is the program and its arguments.
	Argv []string
	// Dir is the working directory.
	Dir string
	// Env is the full environment; nil inherits the process environment.
	Env []string
	// Grace is the SIGTERM to SIGKILL delay (DefaultGrace when 0).
	Grace time.Duration
	// Classify, when set, computes the sandbox facts (and a runner failure
	// error) of a settled run from its outcome and stderr tail.
	Classify func(o render.Outcome, stderrTail string) (*sandbox.Report, error)
}

// Exec returns a spawner running spec in its own process group.
func Exec(spec ExecSpec) Spawner {
	return func(stdout, stderr io.Writer) (Process, error) {
		if len(spec.Argv) == 0 {
			return nil, errors.New("jobs: empty argv")
		}
		cmd := exec.Command(spec.Argv[0], spec.Argv[1:]...)
		cmd.Dir, cmd.Env = spec.Dir, spec.Env
		cmd.Stdin = nil
		cmd.Stdout, cmd.Stderr = stdout, stderr
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := cmd.Start(); err != nil {
			return nil, err
		}
		g := spec.Grace
		if g == 0 {
			g = DefaultGrace
		}
		return &execProc{cmd: cmd, grace: g, spec: spec, stderr: stderr, exited: make(chan struct{})}, nil
	}
}

type execProc struct {
	cmd    *exec.Cmd
	grace  time.Duration
	spec   ExecSpec
	stderr io.Writer
	exited chan struct{}

	once sync.Once
}

func (p *execProc) Wait() Settled {
	err := p.cmd.Wait()
	close(p.exited)
	var o render.Outcome
	ws, ok := p.cmd.ProcessState.Sys().(syscall.WaitStatus)
	switch {
	case ok && ws.Signaled():
		o = render.Outcome{Killed: true, Signal: unix.SignalName(ws.Signal())}
	case ok && ws.Exited():
		o = render.Outcome{ExitCode: ws.ExitStatus()}
	default:
		o = render.Outcome{Killed: true}
	}
	_ = err // the exit status carries everything; an I/O copy error cannot occur with Capture writers
	s := Settled{Outcome: o}
	if p.spec.Classify != nil {
		tail := ""
		if c, ok := p.stderr.(*Capture); ok {
			tail, _, _ = c.Tail()
		}
		s.Sandbox, s.Err = p.spec.Classify(o, tail)
	}
	return s
}

// Pid is the process id (the group leader: Setpgid).
func (p *execProc) Pid() int { return p.cmd.Process.Pid }

func (p *execProc) Kill() {
	p.once.Do(func() {
		pgid := p.cmd.Process.Pid
		_ = syscall.Kill(-pgid, syscall.SIGTERM)
		go func() {
			t := time.NewTimer(p.grace)
			defer t.Stop()
			select {
			case <-t.C:
				_ = syscall.Kill(-pgid, syscall.SIGKILL)
			case <-p.exited:
			}
		}()
	})
}
