package subagents

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/pipeline/delegation"
	"github.com/dshsim/dshsim/tools/subagent"
)

// userSource is a prompt's source.
type userSource struct {
	Kind string `json:"kind"`
}

// Start starts a one-shot child ([subagent.Service]): an out-of-process
// provider's run, or an in-process spawn or fork child driven through one
// turn by its loop. ctx cancels the run.
func (rt *Runtime) Start(ctx context.Context, provider string, req subagent.Request) (subagent.Run, error) {
	if p := rt.providers[provider]; p != nil {
		if err := capabilities(provider, p.Info(), req); err != nil {
			return nil, err
		}
		return p.Start(ctx, req)
	}
	if provider != ProviderSpawn && provider != ProviderFork {
		return nil, pipeline.NewErrorf("SubagentError", "NO_PROVIDER", "no subagent provider registered for %q", provider)
	}
	if ctx.Err() != nil {
		return nil, errors.New("subagent request was aborted before child publication")
	}
	c, loop, err := rt.newChild(provider, req, false)
	if err != nil {
		return nil, err
	}
	run := &inProcRun{rt: rt, child: c, loop: loop, done: make(chan struct{}), structured: req.OutputSchema != nil}
	rt.host.SubagentStarted(c.agent, injector(loop))
	go run.drive(ctx, req.Prompt)
	return run, nil
}

// capabilities is the one-shot capability gate: a request the provider
// cannot honour is refused before any work (VERBATIM, UNSUPPORTED_CAPABILITY).
func capabilities(name string, info subagent.ProviderInfo, req subagent.Request) error {
	for _, need := range []struct {
		when bool
		cap  string
	}{{req.MaxDepth != nil && !info.DepthLimit, "depthLimit"}} {
		if need.when {
			return pipeline.NewErrorf("SubagentError", "UNSUPPORTED_CAPABILITY", "subagent provider %q does not support the %q capability", name, need.cap)
		}
	}
	return nil
}

// inProcRun is one in-process one-shot child: one turn, one result, a
// quiescent disposal.
type inProcRun struct {
	rt         *Runtime
	child      *Child
	loop       Loop
	done       chan struct{}
	structured bool // the child has an output schema

	res       subagent.Result
	err       error
	mu        sync.Mutex
	cancelled bool
	disposed  bool
}

func (r *inProcRun) ID() string            { return r.child.info.SessionID }
func (r *inProcRun) Done() <-chan struct{} { return r.done }

// drive hands the child its prompt and waits until it is idle; a cancelled
// caller cancels the child's turn (the result then reads aborted).
func (r *inProcRun) drive(ctx context.Context, prompt string) {
	defer close(r.done)
	stop := context.AfterFunc(ctx, func() {
		r.mu.Lock()
		r.cancelled = true
		r.mu.Unlock()
		r.loop.Cancel(false)
	})
	defer stop()
	if err := r.loop.Followup(userMessage(textContent(prompt), userSource{"user"})); err != nil {
		r.err = err
		r.rt.end(r.child, delegation.StopError)
		return
	}
	if err := r.loop.WhenIdle(context.Background()); err != nil {
		r.err = err
		return
	}
	events, err := r.child.log.Events()
	if err != nil {
		r.err = fmt.Errorf("read the child's log: %w", err)
		return
	}
	own := events[min(r.child.info.SeedLength, len(events)):]
	stopReason := delegation.StopError // a run that never ended a turn
	if kind := delegation.LastTurnEnd(own); kind != "" {
		stopReason = delegation.StopReasonOf(kind)
	}
	r.mu.Lock()
	cancelled := r.cancelled
	r.mu.Unlock()
	if cancelled && stopReason != delegation.StopCompleted {
		stopReason = delegation.StopAborted
	}
	r.res = subagent.Result{Stop: stopReason, Output: delegation.SelectOutput(own)}
	if r.structured {
		// upstream's readResult: the recorded value, else a completed run
		// that recorded nothing failed
		if r.res.Structured, _ = delegation.StructuredCapture(own); r.res.Structured == nil && stopReason == delegation.StopCompleted {
			r.res.Stop = delegation.StopError
			if cancelled {
				r.res.Stop = delegation.StopAborted
			}
		}
	}
	r.rt.end(r.child, stopReason)
}

// Result waits for the run's result.
func (r *inProcRun) Result(ctx context.Context) (subagent.Result, error) {
	select {
	case <-r.done:
		return r.res, r.err
	case <-ctx.Done():
		<-r.done // the cancellation reaches the child; its turn ends
		return r.res, r.err
	}
}

// Dispose stops the child's loop once idle, then ends the child (scope and
// log); a loop that fails to close is the disposal's failure.
func (r *inProcRun) Dispose() error {
	r.mu.Lock()
	if r.disposed {
		r.mu.Unlock()
		return nil
	}
	r.disposed, r.cancelled = true, true
	r.mu.Unlock()
	r.loop.Cancel(false)
	<-r.done
	err := r.loop.Close()
	r.rt.forget(r.child.agent)
	return errors.Join(err, r.child.End())
}
