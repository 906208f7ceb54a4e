package bash

import (
	"errors"
	"io"
	"os"
	"sync"
	"unicode/utf8"

	"github.com/dshsim/dshsim/internal/jstext"
	"github.com/dshsim/dshsim/render"
	"github.com/dshsim/dshsim/sandbox"
	"github.com/dshsim/dshsim/sandbox/spawn"
	"github.com/dshsim/dshsim/tools/jobs"
)

// spawned adapts a sandbox/spawn process to the job registry: it settles with
// spawn's classification and serves incremental reads from spawn's capture
// (the whole stream while it fits the tail, the full-output file after).
type spawned struct {
	p    *spawn.Process
	tail int

	mu   sync.Mutex
	last [2]string // last tail returned per stream when no full file exists
}

var (
	_ jobs.OutputOwner = (*spawned)(nil)
	_ jobs.Leader      = (*spawned)(nil)
)

// Wait returns once the process settled and, when it was killed, once no
// member of its process group is left alive (the kill's result follows the
// group's end, as upstream's does).
func (s *spawned) Wait() jobs.Settled {
	res, err := s.p.Wait()
	if s.p.KillRequested() {
		<-s.p.Reaped()
	}
	o := render.Outcome{ExitCode: res.ExitCode}
	if res.Signaled {
		o = render.Outcome{Killed: true, Signal: res.Signal}
	}
	return jobs.Settled{Outcome: o, Sandbox: res.Sandbox, Bound: res.Bound, Err: err}
}

func (s *spawned) Kill() { s.p.Kill() }

// Pid is the leader of the process's session and group.
func (s *spawned) Pid() int { return s.p.Pid() }

// Streams are the retained output, decoded as upstream decodes a stream
// (jstext.Decode: one U+FFFD per ill-formed subpart).
func (s *spawned) Streams() (stdout, stderr render.Stream) {
	o, e := s.p.OutputSoFar()
	o.Text, e.Text = jstext.Decode([]byte(o.Text)), jstext.Decode([]byte(e.Text))
	return render.Stream(o), render.Stream(e)
}

func (s *spawned) Since(id jobs.StreamID, cursor int64) (string, int64, bool) {
	o, e := s.p.OutputSoFar()
	st := o
	if id == jobs.Stderr {
		st = e
	}
	if !st.Truncated { // the whole stream is in memory
		if cursor < 0 || cursor > int64(len(st.Text)) {
			cursor = int64(len(st.Text))
		}
		b := completePrefix([]byte(st.Text[cursor:]), s.settled())
		return jstext.Decode(b), cursor + int64(len(b)), false
	}
	if st.FullPath != "" {
		if text, next, ok := readFrom(st.FullPath, cursor, s.tail, s.settled()); ok {
			return text, next, false
		} else if next >= 0 {
			return jstext.Decode([]byte(st.Text)), next, true // more than the tail arrived since the last read
		}
	}
	// overflowed without a full-output file: only the tail is known
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.last[id] == st.Text {
		return "", cursor, false
	}
	s.last[id] = st.Text
	return jstext.Decode([]byte(st.Text)), cursor, true
}

func (s *spawned) settled() bool {
	select {
	case <-s.p.Done():
		return true
	default:
		return false
	}
}

// readFrom reads path from cursor to its current end when that is at most
// max bytes (ok); otherwise it returns the end offset and ok=false; next is
// -1 when the file cannot be read.
func readFrom(path string, cursor int64, max int, settled bool) (string, int64, bool) {
	f, err := os.Open(path)
	if err != nil {
		return "", -1, false
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", -1, false
	}
	size := fi.Size()
	switch {
	case cursor < 0: // the position was lost before the file existed
		return "", size, false
	case cursor > size:
		return "", cursor, true
	}
	if size-cursor > int64(max) {
		return "", size, false
	}
	b := make([]byte, size-cursor)
	if _, err := f.ReadAt(b, cursor); err != nil && !errors.Is(err, io.EOF) {
		return "", -1, false
	}
	b = completePrefix(b, settled)
	return jstext.Decode(b), cursor + int64(len(b)), true
}

// completePrefix drops an incomplete UTF-8 sequence at the end of b (it is
// read next time, when complete), unless the process settled.
func completePrefix(b []byte, settled bool) []byte {
	if settled {
		return b
	}
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				return b[:i]
			}
			break
		}
	}
	return b
}

// isSpawnFailure tells a failure to start the confined command (spawn's
// UnavailableError with a detail: the runner could not be started) from
// other errors, a confiner's own refusal above all (it carries no detail).
func isSpawnFailure(err error) (*sandbox.UnavailableError, bool) {
	var ue *sandbox.UnavailableError
	if !errors.As(err, &ue) || ue.Detail == "" {
		return nil, false
	}
	return ue, true
}

// nodeStartError is how a start that failed before the command ran (a
// workdir that does not exist or is a file, a missing shell) reads: as
// upstream's, whose executor hands Node's spawn error on unchanged. A
// foreground call fails with "Error: spawn bash ENOENT" (Node names argv[0]:
// the shell, or the runner under a wrapping confiner) or "Error: spawn
// ENOTDIR" (an errno Node throws, without the name). A background job whose
// failure Node reports asynchronously (ENOENT, EACCES...) starts and settles
// at once as killed before exit with "spawn failed: Error: spawn bash ENOENT"
// on stderr, as upstream's job does (no runner failure: the runner was never
// at fault). Other errors pass through.
func nodeStartError(err error, policy sandbox.Policy, background bool, stdout, stderr io.Writer) (jobs.Process, error) {
	var se *spawn.StartError
	if !errors.As(err, &se) {
		return nil, err
	}
	if background && se.Async() {
		var sb *sandbox.Report
		if policy.Mode.Confined() {
			sb = &sandbox.Report{Mode: policy.Mode}
		}
		return jobs.Failed(errors.New("Error: "+se.Node()), sb)(stdout, stderr)
	}
	return nil, &nodeSpawnError{msg: se.Node(), err: err}
}

// nodeSpawnError shows Node's text and keeps the start error in its chain.
type nodeSpawnError struct {
	msg string
	err error
}

func (e *nodeSpawnError) Error() string { return e.msg }
func (e *nodeSpawnError) Unwrap() error { return e.err }
