package replay

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dshsim/dshsim/harness/replay/recording"
	"github.com/dshsim/dshsim/llm"
	"github.com/dshsim/dshsim/pipeline/session"
	"github.com/dshsim/dshsim/stack"
	"github.com/dshsim/dshsim/tools/jobs"
)

// errUserCancel is the cause of a prompt the user cancelled (promptAndCancel).
var errUserCancel error = userCancel{}

// userCancel is the user's cancellation. Upstream aborts the turn with the
// reason {kind: "user"}, a plain object, so a run_code program cancelled by
// the user fails with String(reason): "code run failed (abort): [object
// Object]" (the oracle recording code-mode-cancel).
type userCancel struct{}

func (userCancel) Error() string { return "the user cancelled the prompt" }

// JSString is String({kind: "user"}) (noderuntime.JSReason).
func (userCancel) JSString() string { return "[object Object]" }

// errParentCancel is the cause of a turn its parent cancelled (a disposal,
// an interrupt): upstream aborts it with the reason {kind: "parent"}.
var errParentCancel = errors.New("the parent agent cancelled the turn")

// abortReplayStopped is the abort kind of a turn the replay itself stopped
// (ours: its context ended).
const abortReplayStopped = "replay-stopped"

// waitLimit bounds the harness waits (upstream: 10 s, polling every 10 ms).
const (
	waitLimit = 10 * time.Second
	waitPoll  = 10 * time.Millisecond
)

// ModelLatency is the least time the constructed model takes to answer a
// call while a background job runs; it also waits until the running
// background jobs settled (until they used settleCap of CPU time, at most
// settleCeiling). With no job running it answers at once.
const ModelLatency = 50 * time.Millisecond

// maxParallelToolCalls bounds a pool of concurrency-safe calls (upstream 10).
const maxParallelToolCalls = 10

// driver is the replay's agent loop for one agent: the session's agent, or
// a delegated child, each with a driver of its own over the same stack.
// It is upstream's agent loop, run in a goroutine of its own: a message
// queued for a later turn or steered to the next step wakes an idle agent,
// and the delegation runtime drives a child through it ([stack.Loop]). It
// writes the events upstream's agent writes, in its order (so seq numbers
// line up and session_event_read sees what upstream's model saw), serves
// the scripted replies, and runs the tool calls through the stack the way
// upstream's scheduler does. The session's agent speaks to the client
// through upstream's ACP bridge (wire.go); a child has no client. The
// steps of input.json are the client's (client.go).
//
// Its parts, one concern each:
//
//   - when turns run (sched, loop.go): the loop's phase, the wake, the
//     maintenance tasks and holds, closing;
//   - the turns themselves (turn.go): turns, steps, the pre-step
//     (prestep.go) and turn-stopping listeners;
//   - the model (calls, step.go, model.go): requests, replies, retries, the
//     tool calls of a reply;
//   - the pending input (inbox, inbox.go);
//   - the host's yields (host, host.go), which a background child it
//     started waits for (children.go binds children to recorded ones);
//   - what its turns left for others to read (record): how each ended, its
//     task, its title, its flags.
type driver struct {
	driverConfig // what it is made of
	base         context.Context
	log          *session.Log
	sched        schedule   // when turns run
	calls        modelCalls // what the model was asked and offered
	inbox        *inbox
	host         hostYields
	// programStart: a continuable child a run_code program started, whose
	// first prompt's queueing returns only at the child's first yield;
	// settleWith is then its parent, at whose next yield its idleness is
	// observed (see WhenIdle).
	programStart atomic.Bool
	settleWith   *driver
	record       turnRecord
	titles       *titles
	// preStep are the pre-step listeners, outermost first (prestep.go).
	preStep []preStepListener
	// instr are the workspace instructions (nil when off).
	instr *instructionsPlugin
	// compacted: the compaction fixture replaced the baseline already.
	compacted bool
	stopped   chan struct{} // closed when the loop returned
}

// driverConfig is what a driver is made of.
type driverConfig struct {
	rec     *recording.Recording
	label   string // how flags name the session ("" for session.jsonl)
	model   Model
	system  string        // the request header's system prompt
	surface stack.Surface // the agent's tools, context and calls
	stack   *stack.Stack  // the composition: hook bridges, definitions
	ws      string
	wire    agentWire  // the frames the bridge sends (nil: a child's, no client)
	gate    *jobs.Gate // the host's yields
	hooks   agentHooks // the emulated fixtures' seams
	// titleReplies are the title model's replies (sessionTitleLlm; the
	// session's agent only).
	titleReplies []recording.Reply
	// resumed says the log holds a resumed session's seed, whose first
	// user message titles the session (upstream's title plugin folds the
	// whole log).
	resumed bool
	// recorded is a child's recorded log, once it is bound to one (nil:
	// the session's own, rec's).
	recorded func() (recordedLog, bool)
}

// turnRecord is what an agent's turns left for others to read: the
// client's waits, the family's binding, the fixtures, the report.
type turnRecord struct {
	mu     sync.Mutex
	ended  map[int]session.EndReason // turn → how it ended
	task   string                    // the first user prompt queued (a child's task)
	titled bool                      // the session has its title (none pending) at the last turn's end
	flags  []string
}

// newDriver composes the agent loop of one agent: its inbox, titles,
// workspace instructions (the recording's settings) and pre-step
// listeners, its turn numbering, title and request header continuing what
// its log already holds (a fork's copied turns, a resumed child's earlier
// ones); its loop runs until Close.
func newDriver(base context.Context, c driverConfig) (*driver, error) {
	log := c.surface.Log()
	d := &driver{driverConfig: c, base: base, log: log, stopped: make(chan struct{})}
	if d.wire == nil {
		d.wire = noWire{}
	}
	d.sched.init()
	d.host.init()
	d.record.ended = map[int]session.EndReason{}
	d.inbox = newInbox(logAppender{log})
	var llmTitle *recording.TitleLLM
	if c.wire != nil {
		llmTitle = c.rec.Settings.SessionTitleLLM // the session's title model
	}
	d.titles = &titles{llm: llmTitle, replies: c.titleReplies}
	events, err := log.Events()
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", log.Path(), err)
	}
	for _, e := range events {
		switch e.Type {
		case session.KindTurnStart:
			d.sched.turn++
		case session.KindTitle:
			d.titles.titled = true
		case session.KindUserMessage:
			if c.resumed {
				seedTitle(d.titles, e)
			}
		}
	}
	d.instr = newInstructions(d, c.rec.Settings.WorkspaceContext)
	d.preStep = d.preStepListeners()
	go d.loop()
	return d, nil
}

// retryPolicy is a recording's retryPolicy setting with upstream's defaults
// filled in (nil: none).
func retryPolicy(p *recording.RetryPolicy) *llm.RetryPolicy {
	if p == nil {
		return nil
	}
	r := llm.DefaultRetryPolicy()
	r.Mode = p.Mode
	if p.MaxRetries != nil {
		r.MaxRetries = *p.MaxRetries
	}
	if p.RetryableCodes != nil {
		r.RetryableCodes = p.RetryableCodes
	}
	if b := p.Backoff; b != nil {
		if b.InitialDelayMs != nil {
			r.InitialDelayMs = *b.InitialDelayMs
		}
		if b.MaxDelayMs != nil {
			r.MaxDelayMs = *b.MaxDelayMs
		}
		if b.JitterRatio != nil {
			r.JitterRatio = *b.JitterRatio
		}
	}
	return &r
}

func (d *driver) append(kind string, data any) (session.Event, error) {
	return d.appendWith(kind, data, session.AppendOptions{})
}

// logAppender appends the inbox's events to the session log.
type logAppender struct{ log *session.Log }

func (a logAppender) append(kind string, data any) error {
	if _, err := a.log.Append(kind, data); err != nil {
		return fmt.Errorf("append %s to our log: %w", kind, err)
	}
	return nil
}

func (d *driver) appendWith(kind string, data any, o session.AppendOptions) (session.Event, error) {
	e, err := d.log.AppendWith(kind, data, o)
	if err != nil {
		return e, fmt.Errorf("append %s to our log: %w", kind, err)
	}
	return e, nil
}

// flag records a problem of this agent's replay (a child's names it).
func (d *driver) flag(s string) {
	if d.label != "" {
		s = d.label + ": " + s
	}
	d.record.mu.Lock()
	defer d.record.mu.Unlock()
	d.record.flags = append(d.record.flags, s)
}

// problems returns the agent's flags, and the failure that stopped it.
func (d *driver) problems() (flags []string, err error) {
	d.record.mu.Lock()
	flags = append([]string(nil), d.record.flags...)
	d.record.mu.Unlock()
	return flags, d.sched.failure()
}

// titleNotes are the notes of the session's titles (a model-made title
// that could not be made).
func (d *driver) titleNotes() []string {
	d.record.mu.Lock()
	defer d.record.mu.Unlock()
	return append([]string(nil), d.titles.notes...)
}

// task is the first user prompt the agent was given.
func (d *driver) task() string {
	d.record.mu.Lock()
	defer d.record.mu.Unlock()
	return d.record.task
}

// turnEnded reports how turn ended (false while it runs).
func (d *driver) turnEnded(turn int) (session.EndReason, bool) {
	d.record.mu.Lock()
	defer d.record.mu.Unlock()
	r, ok := d.record.ended[turn]
	return r, ok
}

// endedSince reports whether a turn numbered minimum or more ended.
func (d *driver) endedSince(minimum int) bool {
	d.record.mu.Lock()
	defer d.record.mu.Unlock()
	for t := range d.record.ended {
		if t >= minimum {
			return true
		}
	}
	return false
}

// titleLanded reports whether the session has its title, the model-made
// one included (none is still pending).
func (d *driver) titleLanded() bool {
	d.record.mu.Lock()
	defer d.record.mu.Unlock()
	return d.record.titled
}

// abortReason is the turn/end reason of a turn whose context ended.
func abortReason(ctx context.Context) session.EndReason {
	cause := &session.AbortCause{Kind: session.AbortUser}
	switch c := context.Cause(ctx); {
	case errors.Is(c, errUserCancel):
	case errors.Is(c, errParentCancel):
		cause.Kind = session.AbortParent
	default:
		cause.Kind, cause.Error = abortReplayStopped, c.Error()
	}
	return session.EndReason{Kind: session.EndAborted, Reason: cause}
}

func newUUID() string { return session.NewID() }
