package jobs

import (
	"slices"
	"sync"
)

// Gate makes a registry observe its jobs the way a single-threaded host
// (upstream's Node event loop) does: a running job's new output and its
// exit reach the registry only when the host yields, i.e. when something
// calls [Gate.Pump] (the host awaited I/O: a foreground process, a file
// operation, a client round trip) or while a job_output wait blocks. Until
// then a read shows what was observed at the last yield, and a killed job
// stays "stopping". A host that never yields between two tool calls (a
// constructed model answering at once) therefore never shows output that
// arrived between them.
//
// The processes themselves run in real time; only observation is gated.
// A nil *Gate observes at once.
type Gate struct {
	mu      sync.Mutex
	queue   []func()  // settlements, in the order the processes ended
	live    []watched // the registered jobs not settled yet, in registration order
	arrived chan struct{}
}

// watched is a registered job's output pull and its done channel (closed
// once the job settled).
type watched struct {
	pull func()
	done <-chan struct{}
}

// settled reports whether w's job has settled.
func (w watched) settled() bool {
	select {
	case <-w.done:
		return true
	default:
		return false
	}
}

// NewGate returns a gate with nothing observed yet.
func NewGate() *Gate { return &Gate{arrived: make(chan struct{})} }

// Pump is one yield of the host: every live job's output so far is
// observed, then the settlements of the processes that ended, in order
// (each after its own job's last output, as Node's exit follows its data
// events). A job that has settled has nothing more to observe: it is no
// longer pulled (its settlement observed its last output).
func (g *Gate) Pump() {
	if g == nil {
		return
	}
	g.mu.Lock()
	g.live = slices.DeleteFunc(g.live, watched.settled)
	pulls := slices.Clone(g.live)
	g.mu.Unlock()
	for _, w := range pulls {
		w.pull()
	}
	for {
		g.mu.Lock()
		q := g.queue
		g.queue = nil
		g.mu.Unlock()
		if len(q) == 0 {
			return
		}
		for _, f := range q {
			f()
		}
	}
}

// enqueue holds f until the next yield.
func (g *Gate) enqueue(f func()) {
	g.mu.Lock()
	g.queue = append(g.queue, f)
	close(g.arrived)
	g.arrived = make(chan struct{})
	g.mu.Unlock()
}

// watch adds a job's output pull to every yield until done is closed.
func (g *Gate) watch(pull func(), done <-chan struct{}) {
	g.mu.Lock()
	g.live = append(g.live, watched{pull: pull, done: done})
	g.mu.Unlock()
}

// signal is closed when something is queued after the call.
func (g *Gate) signal() <-chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.arrived
}
