package replay

import "sync"

// hostYields are the host's yields during one agent's work: upstream's
// host runs another agent's step only when the agent that runs awaits
// something (a tool call that yields, a fixture's wait) or goes idle. A
// background child the agent started steps from its next yield on
// (holdUntilYield).
type hostYields struct {
	mu   sync.Mutex
	next chan struct{} // closed at the next yield
}

func (h *hostYields) init() { h.next = make(chan struct{}) }

// nextYield returns a channel closed at the host's next yield.
func (h *hostYields) nextYield() <-chan struct{} {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.next
}

func (h *hostYields) yield() {
	h.mu.Lock()
	defer h.mu.Unlock()
	close(h.next)
	h.next = make(chan struct{})
}

// yield records that the host yielded while this agent worked: it awaits
// I/O (a tool call that yields, a fixture's wait) or went idle. A
// background child started by it runs from its next yield on; the waiters
// of its schedule look again.
func (d *driver) yield() {
	d.host.yield()
	d.sched.wake()
}

// holdUntilYield keeps child's first turn from entering its first step
// until d yields after now (or is closed): upstream's host runs a
// background child's step only once the agent that started it awaits
// something or goes idle (its own non-yielding work, a model call that
// answers at once, comes first); the child's turn/start and claim are
// written at once, when its prompt is queued (see queue).
func (d *driver) holdUntilYield(child *driver) {
	yielded := d.host.nextYield()
	child.sched.update(func(s *schedule) { s.held++ })
	go func() {
		defer child.sched.update(func(s *schedule) { s.held-- })
		select {
		case <-yielded:
		case <-d.sched.closed:
		case <-d.base.Done():
		}
	}()
}
