package cmdline

import (
	"context"
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// Interrupt is the state of a command that cleans up when interrupted.
type Interrupt struct {
	mu     sync.Mutex
	sig    os.Signal
	ch     chan os.Signal
	cancel context.CancelFunc
}

// WithInterrupt returns a context that SIGINT or SIGTERM cancels, so the
// command stops what it started (processes of exec.CommandContext are killed)
// and its deferred cleanup runs before it returns. Only the first signal is
// caught: a second one ends the process at once. Call Stop when done.
func WithInterrupt(parent context.Context) (context.Context, *Interrupt) {
	ctx, cancel := context.WithCancel(parent)
	in := &Interrupt{ch: make(chan os.Signal, 1), cancel: cancel}
	signal.Notify(in.ch, os.Interrupt, syscall.SIGTERM)
	go func() {
		select {
		case s := <-in.ch:
			in.mu.Lock()
			in.sig = s
			in.mu.Unlock()
			signal.Stop(in.ch)
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, in
}

// Signal is the signal that interrupted the command, or nil.
func (in *Interrupt) Signal() os.Signal {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.sig
}

// Status is the exit status of a command the signal interrupted: 128 + the
// signal number (130 for SIGINT, 143 for SIGTERM), as a shell reports it;
// code when no signal arrived.
func (in *Interrupt) Status(code int) int {
	if s, ok := in.Signal().(syscall.Signal); ok {
		return 128 + int(s)
	}
	return code
}

// Stop stops catching signals and cancels the context.
func (in *Interrupt) Stop() {
	signal.Stop(in.ch)
	in.cancel()
}
