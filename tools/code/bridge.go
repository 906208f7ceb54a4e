package code

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/pipeline/session"
	"github.com/dshsim/dshsim/sandbox"
	"github.com/dshsim/dshsim/tools/code/noderuntime"
)

// ReasonSettled is the run signal's reason once the run settled.
const ReasonSettled = "run_code settled"

// errSettled is the cause the run signal carries after settlement.
var errSettled = errors.New(ReasonSettled)

// DispatchLog may replace the content a nested call's settle event logs
// (the spill dispatch-log arm); the program's value is untouched.
type DispatchLog func(call *pipeline.Call, content []pipeline.Block) []pipeline.Block

// startEvent and settleEvent are the two events' data, in key order.
type startEvent struct {
	RootCallID   string          `json:"rootCallId"`
	ParentCallID string          `json:"parentCallId"`
	SubCallID    string          `json:"subCallId"`
	Name         string          `json:"name"`
	Arguments    json.RawMessage `json:"arguments"`
}

type settleEvent struct {
	startEvent
	IsError bool             `json:"isError"`
	Content []pipeline.Block `json:"content"`
	// Sandbox is the sandbox facts of the nested call's run (ours,
	// pipeline.Result.Sandbox): the backend that ran and what it cannot
	// govern.
	Sandbox *sandbox.Facts `json:"sandbox,omitempty"`
}

// bridge dispatches one run's nested calls through the registry, one
// driver lane per run, as upstream's: starts in submission order, each
// start waiting for the previous call's prepare stages; safe calls overlap
// up to max, an exclusive call waits for the pool to drain and holds the
// lane through its commit; commits (post-execute, settle event, context messages)
// in submission order.
type bridge struct {
	outer *pipeline.Call
	reg   *pipeline.Registry
	run   context.Context // the run signal
	max   int
	log   DispatchLog
	warn  func(string)

	mu       sync.Mutex
	cond     *sync.Cond
	lane     // under mu
	pacing   // under mu
	bounds   // under mu
	started  sync.WaitGroup
	messages []pipeline.ContextMessage
}

// lane is the run's nested calls in flight: who starts and commits next,
// what runs, what waits.
type lane struct {
	startTurn  int // the submission number that may start next
	commitTurn int // the submission number that may commit next
	running    int
	exclusive  bool
	over       string             // the reason once the run is over
	queued     map[int]queuedCall // submissions waiting to start
	startLog   int                // the highest submission whose start event is logged
	admitted   int                // the submission that left the queue and is logging its start
	undecided  int                // admitted calls whose fate at the body is not sealed (pipeline.Stages.Dispatched)
}

// pacing is what the runtime reports of the program's submissions and
// turns, which orders a call issued after another completed.
type pacing struct {
	paced   bool          // the runtime reports submissions and turns (submit, turnEnded)
	turnEnd int           // the last submission of the program's last ended turn
	issues  map[int]issue // when each submission was issued and read
	// settling is the committed submission whose settle event is not
	// logged yet (0: none), took how long it ran from its read to its
	// commit: a later call issued after it completed waits for that event.
	settling int
	took     time.Duration
}

// bounds are the program's bounds (see [Config]): maxCalls nested calls,
// maxLog bytes of their events; logged counts those bytes; limit is the
// first bound passed (nil while none is); stop ends the run with it.
type bounds struct {
	maxCalls int
	maxLog   int64
	logged   int64
	limit    *limitFailure
	stop     context.CancelCauseFunc
}

// issue is when a submission was issued, in the program's CPU time, and
// when the host read it.
type issue struct {
	cpu  time.Duration
	read time.Time
}

// issueGrace is the program CPU time under which two calls count as issued
// at once whatever a tool's duration: the calls of one Promise.all are
// microseconds apart, a garbage collection between them is not a program
// moving on. It keeps their order stable on a loaded machine.
const issueGrace = 20 * time.Millisecond

// settlesFirst reports whether a tool that took took (from its read to its
// commit) settles before a call issued gap later in the program's CPU time
// starts, as upstream's host, which reads the program's calls while tools
// run, orders them: only a program that worked longer than the tool ran, and
// longer than issueGrace, issued the call after the settle.
func settlesFirst(gap, took time.Duration) bool {
	return gap >= issueGrace && gap >= took
}

// limitFailure is a bound the program passed: the run's failure.
type limitFailure struct{ kind, message string }

func (l *limitFailure) Error() string { return l.message }

// bound sets the program's bounds and how to stop it when it passes one.
func (b *bridge) bound(maxCalls int, maxLog int64, stop context.CancelCauseFunc) {
	b.maxCalls, b.maxLog, b.stop = maxCalls, maxLog, stop
}

// pass records the first bound passed, ends the lane (no call is
// dispatched any more) and stops the program. Callers hold mu.
func (b *bridge) pass(l *limitFailure) {
	if b.limit != nil {
		return
	}
	b.limit = l
	if b.over == "" {
		b.over = l.kind
	}
	b.cond.Broadcast()
	if b.stop != nil {
		b.stop(l)
	}
}

// passed is the bound the program passed, nil when none.
func (b *bridge) passed() *limitFailure {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.limit
}

func newBridge(outer *pipeline.Call, reg *pipeline.Registry, run context.Context, max int, log DispatchLog, warn func(string)) *bridge {
	b := &bridge{outer: outer, reg: reg, run: run, max: max, log: log, warn: warn,
		lane: lane{startTurn: 1, commitTurn: 1, queued: map[int]queuedCall{}}, pacing: pacing{issues: map[int]issue{}}}
	b.cond = sync.NewCond(&b.mu)
	return b
}

// errOver is the VERBATIM rejection of a call the run can no longer take.
func errOver(reason, name, what string) error {
	return fmt.Errorf("run_code run is over (%s); %s %s", reason, name, what)
}

// queuedCall is a submission waiting to start: its tool and arguments.
type queuedCall struct {
	name string
	args json.RawMessage
}

// safe reports whether a call runs beside others, as upstream's scheduler
// classifies it ([pipeline.RunsBeside]): a ConcurrencySafe tool, as
// registered now, whose schema accepts the arguments; unknown tools and
// refused arguments run alone.
func (b *bridge) safe(name string, args json.RawMessage) bool {
	t, ok := b.reg.Lookup(name)
	return ok && pipeline.RunsBeside(t, args)
}

// free reports whether the lane has room for a call of this class now: a
// safe call beside other safe calls up to max, an exclusive one alone.
// Callers hold mu.
func (b *bridge) free(safe bool) bool {
	return (safe && !b.exclusive && b.running < b.max) || (!safe && b.running == 0)
}

// submit registers a submission the moment the runtime reads it, before its
// dispatch goroutine runs: a call that commits meanwhile sees it queued, and
// when the program issued it.
func (b *bridge) submit(s noderuntime.Submission) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := int(s.ID)
	b.issues[n] = issue{cpu: s.CPU, read: time.Now()}
	if b.over == "" && n > b.startLog {
		b.queued[n] = queuedCall{s.Name, s.Args}
	}
	b.cond.Broadcast()
}

// issuedAfter reports whether submission m was issued after the settling
// submission completed (see [settlesFirst]); false when either was not
// submitted through the runtime. Callers hold mu.
func (b *bridge) issuedAfter(m int) bool {
	if b.settling == 0 || m <= b.settling {
		return false
	}
	n, ok := b.issues[b.settling]
	later, lok := b.issues[m]
	return ok && lok && settlesFirst(later.cpu-n.cpu, b.took)
}

// turnEnded records that the program's turn ended with submission seq: every
// call issued with it is submitted.
func (b *bridge) turnEnded(seq int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.turnEnd = max(b.turnEnd, int(seq))
	b.cond.Broadcast()
}

// testDispatchDelay, set by tests only, runs first in every dispatch: it
// stands for the dispatch goroutine of a submission being scheduled late.
var testDispatchDelay func(seq int64)

// call is the runtime's dispatcher: it runs tools.<name>(args) as nested
// call number seq (program order, counted at submission by the runtime)
// and returns the value the program receives, or the error whose message
// the program's ToolCallError carries.
func (b *bridge) call(_ context.Context, seq int64, name string, args json.RawMessage) (json.RawMessage, error) {
	if testDispatchDelay != nil {
		testDispatchDelay(seq)
	}
	n := int(seq)
	if err := b.countCall(n, name); err != nil {
		return nil, err
	}
	safe, err := b.admit(n, name, args)
	if err != nil {
		return nil, err
	}
	defer b.started.Done()

	// --8<-- [start:dispatch]
	sub := pipeline.NewSubCall(b.outer, fmt.Sprintf("%s:code:%d", b.outer.CallID(), n), name, args, b.run)
	ev := startEvent{RootCallID: b.outer.RootCallID(), ParentCallID: b.outer.CallID(), SubCallID: sub.CallID(), Name: name, Arguments: args}
	b.append(session.KindCodeDispatchStart, ev)
	b.startLogged(n)
	res := b.reg.ExecuteStaged(sub, b.stages(n))
	content := res.Content
	if content == nil {
		content = []pipeline.Block{}
	}
	b.leave(n, safe)
	b.append(session.KindCodeDispatch, settleEvent{startEvent: ev, IsError: res.IsError, Content: b.logContent(sub, content), Sandbox: sandbox.FactsOf(res.Sandbox)})
	b.settled(n)
	// --8<-- [end:dispatch]

	if reason := b.commit(res); reason != "" {
		return nil, errOver(reason, name, "result discarded")
	}
	return programValue(res)
}

// countCall refuses submission n past the bound of nested calls: it is
// not dispatched, nothing is logged, and the run stops (call-limit).
func (b *bridge) countCall(n int, name string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.maxCalls <= 0 || n <= b.maxCalls {
		return nil
	}
	l := &limitFailure{kind: KindCallLimit, message: fmt.Sprintf("more than %d nested tool calls in one program (the bound of nested calls); %s was not dispatched", b.maxCalls, name)}
	b.pass(l)
	return l
}

// admit waits until submission n may start (its turn, and room in the lane
// for its class, classified again right before the start) and takes its
// place in the lane; a run that is over rejects it.
func (b *bridge) admit(n int, name string, args json.RawMessage) (safe bool, err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.over != "" {
		delete(b.queued, n) // submitted, never to start
		b.cond.Broadcast()
		return false, errOver(b.over, name, "not dispatched")
	}
	b.queued[n] = queuedCall{name, args}
	for {
		if b.over != "" {
			delete(b.queued, n)
			b.cond.Broadcast()
			return false, errOver(b.over, name, "tool call abandoned")
		}
		if b.startTurn == n && !b.issuedAfter(n) {
			safe = b.safe(name, args) // classified again right before the start
			if b.free(safe) {
				break
			}
		}
		b.cond.Wait()
	}
	delete(b.queued, n)
	b.admitted = n
	b.undecided++
	b.running++
	b.exclusive = !safe
	b.started.Add(1)
	return safe, nil
}

// startLogged records that submission n's start event is logged.
func (b *bridge) startLogged(n int) {
	b.mu.Lock()
	b.startLog = max(b.startLog, n)
	b.cond.Broadcast()
	b.mu.Unlock()
}

// stages are submission n's lane stages: once prepared, the next
// submission may start; it commits in submission order.
func (b *bridge) stages(n int) pipeline.Stages {
	return pipeline.Stages{
		Prepared: func() {
			b.mu.Lock()
			b.startTurn++
			b.cond.Broadcast()
			b.mu.Unlock()
		},
		Dispatched: func() {
			b.mu.Lock()
			b.undecided--
			b.cond.Broadcast()
			b.mu.Unlock()
		},
		Commit: func() {
			b.mu.Lock()
			for b.commitTurn != n {
				b.cond.Wait()
			}
			b.mu.Unlock()
		},
	}
}

// leave frees the lane of committed submission n and decides whether the
// next submission logs its start before n's settle event. Upstream appends
// the settle event in a task of its own while its driver goes on at once,
// and its host reads the program's calls while tools run: a call the program
// issued before n completed, that may start now, logs its start first, and
// leave waits for it; a call issued after (see [settlesFirst]) waits for n's
// settle event ([bridge.settled]). With a runtime that reports turns, a call
// the turn that issued n has not issued yet may still come: leave waits for
// it or for the turn's end, so the order never depends on when the host
// reads the program's frames.
func (b *bridge) leave(n int, safe bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.running--
	if !safe {
		b.exclusive = false
	}
	b.settling = n
	if is, ok := b.issues[n]; ok {
		b.took = time.Since(is.read)
	}
	b.cond.Broadcast()
	for b.over == "" {
		next := b.startTurn
		if b.startLog >= next {
			return
		}
		q, queued := b.queued[next]
		switch {
		case queued || b.admitted == next:
			if b.issuedAfter(next) || (b.admitted != next && !b.free(b.safe(q.name, q.args))) {
				return
			}
		case !b.paced || b.turnEnd >= n:
			return
		}
		b.cond.Wait()
	}
}

// settled records that submission n's settle event is logged: a call issued
// after n completed may start.
func (b *bridge) settled(n int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.settling == n {
		b.settling, b.took = 0, 0
	}
	b.cond.Broadcast()
}

// commit keeps the call's contexts and messages for the outer call and
// passes the commit turn on; it returns the run's over reason ("" while the
// run goes on). A successful call whose content holds an image hands its
// content on first, as a message of its own (upstream's tools-code-mode:
// the program gets the value, the model the image at its next step).
func (b *bridge) commit(res pipeline.Result) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if m, ok := imageMessage(res); ok {
		b.messages = append(b.messages, m)
	}
	b.messages = append(b.messages, res.ContextMessages...)
	b.commitTurn++
	b.cond.Broadcast()
	return b.over
}

// ImagePlugin is the source of the message that hands a nested call's
// image on (VERBATIM).
const ImagePlugin = "tools-code-mode"

// imageMessage is the message a settled nested call hands on when it
// succeeded with an image among its blocks: all its blocks, text and image.
func imageMessage(res pipeline.Result) (pipeline.ContextMessage, bool) {
	if res.IsError || !slices.ContainsFunc(res.Content, func(c pipeline.Block) bool { return c.Type == "image" }) {
		return pipeline.ContextMessage{}, false
	}
	return pipeline.ContextMessage{Plugin: ImagePlugin, Texts: []string{}, Content: append([]pipeline.Block(nil), res.Content...)}, true
}

// programValue is what the program receives from a settled call: its
// value (null for none), or for an error result the error whose message
// its ToolCallError carries.
func programValue(res pipeline.Result) (json.RawMessage, error) {
	switch {
	case res.IsError:
		msg := ""
		if res.Error != nil {
			msg = res.Error.Message
		}
		return nil, errors.New(msg)
	case res.Value == nil:
		return json.RawMessage("null"), nil
	}
	return res.Value, nil
}

// logContent is the content the settle event logs: the dispatch-log arm's
// replacement, or the original when there is none or it fails.
func (b *bridge) logContent(sub *pipeline.Call, content []pipeline.Block) (out []pipeline.Block) {
	if b.log == nil {
		return content
	}
	defer func() {
		if v := recover(); v != nil {
			b.warn(fmt.Sprintf("tools: code-dispatch-log listener failed for %s: %v; logging the original settled content", sub.Name(), v))
			out = content
		}
	}()
	if r := b.log(sub, append([]pipeline.Block(nil), content...)); r != nil {
		return r
	}
	return content
}

// append logs an event to the agent's session; with no agent or no
// session, calls run and nothing is logged.
func (b *bridge) append(typ string, data any) {
	a := b.outer.Agent()
	if a == nil || a.Session == nil {
		return
	}
	ev, err := a.Session.Append(typ, data)
	if err != nil {
		b.warn(fmt.Sprintf("tools: %s of %s not logged: %v", typ, b.outer.CallID(), err))
		return
	}
	line, _ := json.Marshal(ev) // the line as the log holds it, without its newline
	b.mu.Lock()
	defer b.mu.Unlock()
	b.logged += int64(len(line)) + 1
	if b.maxLog > 0 && b.logged > b.maxLog {
		b.pass(&limitFailure{kind: KindLogLimit, message: fmt.Sprintf("the program's nested tool calls wrote %d bytes of session log, more than %d (the bound of one program's log bytes); no further call was dispatched", b.logged, b.maxLog)})
	}
}

// quiesceLimit bounds [bridge.quiesce]: a call still in its prepare stages
// then waits on the outside (an approval, a hook), where upstream's host
// would have gone on to the program's completion.
const quiesceLimit = 2 * time.Second

// quiesce waits, when the program has completed, until every admitted call
// reached its body (the pipeline's Dispatched: its prepare stages are over
// and the body runner read the signal) and no submitted call that may start
// now waits to: upstream's
// host starts and dispatches those (its prepare stages settle within the
// same task) before it handles the completion, so a call the program did not
// await is dispatched, then aborted. Without this wait, a dispatch goroutine
// scheduled late on a loaded machine was cut off before its dispatch
// ("tool call aborted before dispatch", oracle recording code-edge). A call
// queued behind an exclusive one is not waited for: it is abandoned.
func (b *bridge) quiesce(limit time.Duration) {
	expired := false
	timer := time.AfterFunc(limit, func() {
		b.mu.Lock()
		expired = true
		b.cond.Broadcast()
		b.mu.Unlock()
	})
	defer timer.Stop()
	b.mu.Lock()
	defer b.mu.Unlock()
	for !expired && b.over == "" {
		next := b.startTurn
		undispatched := b.undecided > 0
		q, queued := b.queued[next]
		if !undispatched && (!queued || !b.free(b.safe(q.name, q.args))) {
			return
		}
		b.cond.Wait()
	}
}

// end marks the run over (queued calls are abandoned, no call starts any
// more) before its signal aborts the calls in flight.
func (b *bridge) end(reason string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.over == "" {
		b.over = reason
	}
	b.cond.Broadcast()
}

// drain ends the lane: queued calls are abandoned, calls in flight (which
// see the run signal) settle; it returns when every started call committed,
// with the context messages the calls deferred.
func (b *bridge) drain(reason string) []pipeline.ContextMessage {
	b.mu.Lock()
	if b.over == "" {
		b.over = reason
	}
	b.cond.Broadcast()
	b.mu.Unlock()
	b.started.Wait()
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]pipeline.ContextMessage(nil), b.messages...)
}
