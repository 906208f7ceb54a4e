package shell

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/creack/pty"

	"github.com/dshsim/dshsim/sandbox"
	"github.com/dshsim/dshsim/sandbox/spawn"
)

// Terminal geometry and scrollback of upstream's terminal-bash defaults.
const (
	rows, cols      = 40, 160
	scrollbackLines = 10000
	scrollbackBytes = 4 << 20
	// drainGrace bounds the wait for the terminal's last output once the
	// shell exited (a background child may hold the terminal open).
	drainGrace = 500 * time.Millisecond
	// hangupWait bounds the wait for a hung-up shell to end.
	hangupWait = time.Second
)

// ErrInit is the failure of a shell that never reached its prompt.
var ErrInit = errors.New("persistent bash shell did not accept initialization")

// shell is one interactive bash on a pseudo-terminal, confined as one
// command under the policy it was started with.
type shell struct {
	policy sandbox.Policy
	master *os.File
	proc   *spawn.Process

	mu      sync.Mutex
	screen  screen
	changed chan struct{} // a token when output arrived
	eof     chan struct{} // closed when the terminal's output ended
	// lastOutput is when text or a prompt last arrived (under mu).
	lastOutput time.Time

	// shellPgid is the shell's process group (in front at its prompt);
	// inputWait is set when the last call ended on a wait for input (no
	// prompt comes before the next command is typed).
	shellPgid int
	inputWait bool
}

// spec is how a shell starts.
type spec struct {
	argv     []string
	dir      string
	env      []string
	policy   sandbox.Policy
	confiner spawn.Confiner
	grace    time.Duration
}

// start starts the shell confined by sp.policy, on a pseudo-terminal that
// is its controlling terminal, and waits (until ctx is done) for its first
// prompt, then turns the terminal's echo off (upstream's "stty -echo") and
// waits for the next.
func start(ctx context.Context, sp spec) (*shell, error) {
	if sp.policy.Mode.Confined() && sp.confiner == nil {
		return nil, &sandbox.UnavailableError{Mode: sp.policy.Mode}
	}
	if sp.policy.Mode != sandbox.DangerFullAccess && !sp.policy.Mode.Confined() {
		return nil, fmt.Errorf("tool-bash-persistent: unknown sandbox mode %q", string(sp.policy.Mode))
	}
	master, replica, err := pty.Open()
	if err != nil {
		return nil, fmt.Errorf("persistent bash: open a pseudo-terminal: %w", err)
	}
	defer replica.Close() // the shell holds its own copies
	if err := pty.Setsize(master, &pty.Winsize{Rows: rows, Cols: cols}); err != nil {
		master.Close()
		return nil, fmt.Errorf("persistent bash: size the pseudo-terminal: %w", err)
	}
	p, err := spawn.Start(ctx, spawn.Request{Argv: sp.argv, Policy: sp.policy, Confiner: sp.confiner, Detach: true,
		Dir: sp.dir, Env: sp.env, Terminal: replica, Grace: sp.grace})
	if err != nil {
		master.Close()
		return nil, err
	}
	s := &shell{policy: sp.policy, master: master, proc: p, changed: make(chan struct{}, 1), eof: make(chan struct{}),
		screen: screen{maxBytes: scrollbackBytes, maxLines: scrollbackLines}}
	go s.read()
	if err := s.init(ctx); err != nil {
		s.close()
		return nil, err
	}
	return s, nil
}

// init waits for the first prompt, turns echo off and waits for the next.
func (s *shell) init(ctx context.Context) error {
	if !s.waitPrompt(ctx) {
		return ErrInit
	}
	if _, err := s.send("stty -echo"); err != nil {
		return err
	}
	if !s.waitPrompt(ctx) {
		return ErrInit
	}
	s.shellPgid, _ = foreground(s.master)
	return nil
}

// read copies the terminal's output into the screen until it ends (every
// holder of the replica closed it, or the master was closed).
func (s *shell) read() {
	defer close(s.eof)
	buf := make([]byte, 32<<10)
	for {
		n, err := s.master.Read(buf)
		if n > 0 {
			s.mu.Lock()
			w, p := s.screen.written, s.screen.prompts
			s.screen.write(buf[:n])
			if s.screen.written != w || s.screen.prompts != p {
				s.lastOutput = time.Now()
			}
			s.mu.Unlock()
			s.notify()
		}
		if err != nil {
			s.mu.Lock()
			s.screen.flush()
			s.mu.Unlock()
			s.notify()
			return
		}
	}
}

func (s *shell) notify() {
	select {
	case s.changed <- struct{}{}:
	default:
	}
}

// send marks the screen, begins the send's readiness evidence (the
// foreground group before the line is typed) and types line and a
// carriage return.
func (s *shell) send(line string) (*sendOp, error) {
	s.mu.Lock()
	s.screen.mark()
	prompts := s.screen.prompts
	s.mu.Unlock()
	s.inputWait = false
	op := s.begin(prompts)
	if _, err := s.master.Write([]byte(line + "\r")); err != nil {
		return nil, fmt.Errorf("persistent bash: write to the terminal: %w", err)
	}
	return op, nil
}

// begin is a send's evidence from now: the foreground group and whether
// it waits for input.
func (s *shell) begin(prompts int) *sendOp {
	fg, ok := foreground(s.master)
	return begin(time.Now(), fg, ok && stdinWaiting(fg), prompts)
}

// probed is a poll's outcome and the send's evidence after it.
type probed struct {
	v  verdict
	op *sendOp
}

// probe polls op away from the caller, which keeps its deadline: the
// poll reads the memory of the shell's processes, which a process could
// hold up.
func (s *shell) probe(op *sendOp) chan probed {
	c := make(chan probed, 1)
	go func() {
		v, next := s.poll(op)
		c <- probed{v, next}
	}()
	return c
}

// poll is one readiness poll of op; an idle send begins again, as
// upstream's tool sends again after an idle settle.
func (s *shell) poll(op *sendOp) (verdict, *sendOp) {
	s.mu.Lock()
	sm := sample{now: time.Now(), lastOutput: s.lastOutput, prompts: s.screen.prompts, atPrompt: s.screen.bare(), shellPgid: s.shellPgid}
	s.mu.Unlock()
	sm.fg, _ = foreground(s.master)
	v := op.poll(sm, stdinWaiting)
	if v == idle {
		return pending, s.begin(sm.prompts)
	}
	return v, op
}

// waitPrompt waits until the shell prints its prompt; false when the shell
// exits or ctx is done first.
func (s *shell) waitPrompt(ctx context.Context) bool {
	for {
		s.mu.Lock()
		ready := s.screen.atPrompt()
		s.mu.Unlock()
		if ready {
			return true
		}
		select {
		case <-s.changed:
		case <-s.proc.Done():
			return false
		case <-ctx.Done():
			return false
		}
	}
}

// snapshot is the text since the mark and whether its head was dropped.
func (s *shell) snapshot() (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.screen.text, s.screen.dropped
}

// exited waits for the terminal's last output (bounded), and returns the
// shell's end: its exit code, or the signal that killed it.
func (s *shell) exited() (code int, signal string) {
	select {
	case <-s.eof:
	case <-time.After(drainGrace):
	}
	res, _ := s.proc.Wait()
	if res.Signaled {
		return -1, res.Signal
	}
	return res.ExitCode, ""
}

// close ends the shell: the terminal is hung up (the session's processes
// get SIGHUP, which ends an interactive bash and its jobs); a shell still
// there after hangupWait has its process group killed (SIGTERM, which an
// interactive bash ignores, then SIGKILL after the grace); close returns
// once the shell is gone.
func (s *shell) close() {
	s.master.Close()
	select {
	case <-s.proc.Done():
	case <-time.After(hangupWait):
		s.proc.Kill()
		<-s.proc.Done()
	}
}

// wrap is upstream's wrapCommand: the command between a start and an end
// marker (with its status), evaluated by the shell.
func wrap(command, start, end string) string {
	return "printf '%s\\n' " + quote(start) + "; eval -- " + quote(command) + "; __dsh_persistent_bash_status=$?; printf '%s%s\\n' " + quote(end) + ` "$__dsh_persistent_bash_status"`
}

// quote is upstream's quoteForBash: an ANSI-C quoted string.
func quote(v string) string {
	r := strings.NewReplacer(`\`, `\\`, `'`, `\'`, "\r", `\r`, "\n", `\n`)
	return "$'" + r.Replace(v) + "'"
}
