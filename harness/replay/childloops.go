package replay

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/dshsim/dshsim/harness/replay/recording"
	"github.com/dshsim/dshsim/stack"
	"github.com/dshsim/dshsim/tools/jobs"
)

// ChildLoops drives delegated children with the replay's agent loop outside
// a replay (a simulation): each child gets a driver of its own, as in a
// replay, over the model the caller gives it (a constructed one), with the
// default profile's listeners and no client. It is the [stack.Loops] of a
// stack the caller composes; [ChildLoops.Attach] binds that stack before a
// child starts, [ChildLoops.Close] stops every child's loop.
type ChildLoops struct {
	base  context.Context
	model func(c *stack.Child) Model

	mu      sync.Mutex
	st      *stack.Stack
	ws      string
	gate    *jobs.Gate
	drivers []*driver
}

// NewChildLoops returns the loops of children whose models model makes.
func NewChildLoops(ctx context.Context, model func(c *stack.Child) Model) *ChildLoops {
	return &ChildLoops{base: ctx, model: model}
}

// Attach binds the stack the children are delegated from, its workspace
// and the job gate its jobs are observed through (nil: none).
func (l *ChildLoops) Attach(st *stack.Stack, ws string, gate *jobs.Gate) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.st, l.ws, l.gate = st, ws, gate
}

// Start starts the loop of a new child ([stack.Loops]).
func (l *ChildLoops) Start(c *stack.Child) (stack.Loop, error) {
	l.mu.Lock()
	st, ws, gate := l.st, l.ws, l.gate
	l.mu.Unlock()
	if st == nil {
		return nil, errors.New("replay: ChildLoops has no stack attached")
	}
	d, err := newDriver(l.base, driverConfig{rec: &recording.Recording{}, label: fmt.Sprintf("child %s", c.Info().SessionID),
		model: l.model(c), system: notModelledSystem, surface: c, stack: st, ws: ws, gate: gate})
	if err != nil {
		return nil, err
	}
	l.mu.Lock()
	l.drivers = append(l.drivers, d)
	l.mu.Unlock()
	return d, nil
}

// Close stops every child's loop (a running turn is aborted) and returns
// the problems their loops met (a flag, a failure of a loop).
func (l *ChildLoops) Close() error {
	l.mu.Lock()
	ds := l.drivers
	l.drivers = nil
	l.mu.Unlock()
	var errs []error
	for _, d := range ds {
		d.Cancel(false)
		d.Close()
		flags, err := d.problems()
		for _, f := range flags {
			errs = append(errs, errors.New(f))
		}
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}
