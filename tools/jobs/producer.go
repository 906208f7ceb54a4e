package jobs

import (
	"context"
	"io"
)

// Producer job statuses beyond a process's (upstream's job record: a
// producer that settles failed, with its detail).
const StatusFailed = "failed"

// Outcome is how a producer job (work that is not a process: a one-shot
// background subagent) ended: completed with its output, killed, or failed
// with a detail. Read returns Output on every read of the settled job.
type Outcome struct {
	Status, Detail, Output string
}

// Produce does a producer job's work; ctx is cancelled when the job is
// killed (job_kill, Close).
type Produce func(ctx context.Context) Outcome

// StartProducer starts a background job whose work is produce, run in a
// goroutine of its own (admission and ids as for a process); its outcome
// settles the job and sends its notice.
func (r *Registry) StartProducer(spec Spec, produce Produce) (*Job, error) {
	ctx, cancel := context.WithCancel(context.Background())
	p := &producerProc{cancel: cancel, done: make(chan struct{})}
	job, err := r.Start(spec, func(_, _ io.Writer) (Process, error) { return p, nil })
	if err != nil {
		cancel()
		return nil, err
	}
	go func() {
		p.outcome = produce(ctx)
		cancel()
		close(p.done)
	}()
	return job, nil
}

// StartSettled registers a background job that has already settled with o
// (a producer whose work finished before its start returned): it takes an
// id, and its notice is sent before StartSettled returns, as upstream
// announces a settlement that beats the start's own result.
func (r *Registry) StartSettled(spec Spec, o Outcome) (*Job, error) {
	return r.Start(spec, func(_, _ io.Writer) (Process, error) { return settledProc{o}, nil })
}

// producerProc is a producer job's Process.
type producerProc struct {
	cancel  context.CancelFunc
	done    chan struct{}
	outcome Outcome
}

func (p *producerProc) Wait() Settled {
	<-p.done
	o := p.outcome
	return Settled{Result: &o}
}

func (p *producerProc) Kill() { p.cancel() }

// settledProc is a producer that settled before its start returned.
type settledProc struct{ o Outcome }

func (s settledProc) Wait() Settled { o := s.o; return Settled{Result: &o} }

func (settledProc) Kill() {}

// Admit checks owner's admission bound without starting anything (a
// producer checks it before it starts its work).
func (r *Registry) Admit(owner string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.admitLocked(owner)
}
