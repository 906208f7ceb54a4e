package shell

import "time"

// Readiness timing of upstream's terminal-bash defaults.
const (
	pollInterval    = 50 * time.Millisecond
	exactProbeAfter = 150 * time.Millisecond
	idleSilence     = 3 * time.Second
	handoffGrace    = 500 * time.Millisecond
)

// sendOp is one send's readiness evidence (upstream's LocalSendOperation):
// when it began, the terminal's foreground group then and whether that
// group has left its wait for input since, and the screen's prompt count
// then.
type sendOp struct {
	started     time.Time
	initialPgid int
	leftWait    bool
	prompts     int
}

// begin starts a send's evidence: the foreground group before the text
// is typed (none: 0) and whether it was waiting for input.
func begin(now time.Time, pgid int, waiting bool, prompts int) *sendOp {
	return &sendOp{started: now, initialPgid: pgid, leftWait: !waiting, prompts: prompts}
}

// accepts is upstream's acceptsStdinWait: another group's wait is taken
// at once; the group that was in front when the send began (the shell at
// its prompt) counts only once it has been seen not waiting.
func (o *sendOp) accepts(pgid int, waiting bool) bool {
	if pgid != o.initialPgid {
		return waiting
	}
	if !waiting {
		o.leftWait = true
	}
	return waiting && o.leftWait
}

// sample is what one readiness poll sees.
type sample struct {
	now        time.Time
	lastOutput time.Time
	// prompts is the screen's prompt count; atPrompt whether the text
	// after the last prompt marker is exactly the prompt.
	prompts  int
	atPrompt bool
	// fg is the terminal's foreground group (0: none); shellPgid the
	// shell's own.
	fg, shellPgid int
}

// verdict is a poll's outcome.
type verdict int

const (
	pending   verdict = iota // keep waiting
	inputWait                // the foreground waits for terminal input
	idle                     // silent too long: the send begins again
)

// poll is upstream's pollReadiness for a send in progress: the shell back
// at its bare prompt (a prompt since the send, nothing after it, quiet
// for a poll interval, the shell in front) or, once exactProbeAfter has
// passed, a foreground group the send accepts waiting to read descriptor
// 0 (waiting reports it) is a wait for input; idleSilence without output
// (plus handoffGrace after a prompt) is idle.
func (o *sendOp) poll(s sample, waiting func(pgid int) bool) verdict {
	last := s.lastOutput
	if o.started.After(last) {
		last = o.started // a send's evidence starts fresh
	}
	quiet := s.now.Sub(last)
	promptSeen := s.prompts > o.prompts
	if promptSeen && s.atPrompt && quiet >= pollInterval && s.fg != 0 && s.fg == s.shellPgid {
		return inputWait
	}
	accepted := s.fg != 0 && o.accepts(s.fg, waiting(s.fg))
	if s.now.Sub(o.started) >= exactProbeAfter && accepted {
		return inputWait
	}
	grace := time.Duration(0)
	if promptSeen {
		grace = handoffGrace
	}
	if quiet >= idleSilence+grace {
		return idle
	}
	return pending
}
