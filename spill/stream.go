package spill

import (
	"fmt"
	"os"

	"github.com/dshsim/dshsim/pipeline"
)

// Writer receives a tool's output as a stream and spills it in bounded
// memory. Write everything, then call Close. Until the output is known to be
// over the budget it is buffered (at most the largest size that could still be
// inline); from then on every byte goes to the spill file while only a bounded
// head stays in memory, and Close reads the bounded tail back from the file.
type Writer struct {
	p     *Policy
	call  *pipeline.Call
	limit int // in-memory bound: the largest inline size, also the head/tail window

	buf     []byte // everything, until spilled; then the head window
	file    *File  // the tail is read back from it at Close
	bytes   int64
	counter unitCounter
	err     error
	keepAll bool // a call that never spills: keep everything
}

// NewWriter returns a streaming writer for call's output. For a call that
// never spills (read, nested), a disabled policy or a policy without a store
// the writer keeps the whole output in memory, as the result would be inline
// anyway.
func (p *Policy) NewWriter(call *pipeline.Call) *Writer {
	w := &Writer{p: p, call: call}
	ok, _ := Spillable(call, nil)
	if !p.Enabled() || !ok || p.store == nil {
		w.keepAll = true
		return w
	}
	if p.unit == Bytes {
		w.limit = p.cap + 4
	} else {
		// a UTF-16 unit is at most 3 UTF-8 bytes; a block of cap tokens holds at most 4*cap units
		w.limit = 12*p.cap + 16
	}
	return w
}

// Write consumes p. It fails only when the spill file cannot be written; the
// writer then keeps what it has and Close reports the error.
func (w *Writer) Write(b []byte) (int, error) {
	if w.err != nil {
		return 0, w.err
	}
	n := len(b)
	w.bytes += int64(n)
	if !w.keepAll && w.p.unit == Tokens && w.file == nil {
		// the count only decides whether to spill; once spilling it is not needed
		w.counter.write(b)
	}
	if w.file == nil {
		if w.keepAll || len(w.buf)+len(b) <= w.limit && !w.over() {
			w.buf = append(w.buf, b...)
			return n, nil
		}
		// over the budget: open the file and flush what we held
		f, err := w.p.store.Create(w.call.SessionID(), w.call.Name()+".txt")
		if err != nil {
			w.err = err
			return 0, err
		}
		w.file = f
		if _, err := f.Write(w.buf); err != nil {
			w.err = err
			return 0, err
		}
		if len(w.buf) > w.limit {
			w.buf = w.buf[:w.limit:w.limit]
		}
	}
	if len(w.buf) < w.limit {
		k := min(w.limit-len(w.buf), len(b))
		w.buf = append(w.buf, b[:k]...)
	}
	if _, err := w.file.Write(b); err != nil {
		w.err = fmt.Errorf("spill-local: write %s: %w", w.file.locator, err)
		return 0, w.err
	}
	return n, nil
}

func (w *Writer) over() bool {
	if w.p.unit == Bytes {
		return w.bytes > int64(w.p.cap)
	}
	return (w.counter.total()+3)/4+4 > int64(w.p.cap)
}

// Streamed is the outcome of a streamed output.
type Streamed struct {
	// Text is what the model gets: the whole output when inline, else the preview and notice.
	Text string
	// Spilled reports that the output went to a file.
	Spilled bool
	// Saved describes the file when Spilled.
	Saved Saved
	// Bytes is the total output size.
	Bytes int64
}

// Close finishes the stream. When the file could not be written or the notice
// would not fit, the error says so and Text holds what could be kept (the
// output is then truncated, never silently: the error names the reason).
func (w *Writer) Close() (Streamed, error) {
	if w.file == nil {
		if w.err != nil {
			w.p.warn(fmt.Sprintf("spill-policy: %v", w.err))
			return Streamed{Text: string(w.buf), Bytes: w.bytes}, w.err
		}
		return Streamed{Text: string(w.buf), Bytes: w.bytes}, nil
	}
	var tail []byte
	if w.err == nil {
		tail, w.err = w.file.Tail(w.limit)
	}
	saved, cerr := w.file.Close()
	if w.err != nil || cerr != nil {
		err := w.err
		if err == nil {
			err = cerr
		}
		return Streamed{Text: string(w.buf), Bytes: w.bytes}, err
	}
	win := &windows{head: string(w.buf), tail: string(tail), bytes: w.bytes}
	var text string
	var ok bool
	if w.p.unit == Bytes {
		text, ok = w.p.byteLayout(win, saved.Locator)
	} else {
		text, ok = w.p.tokenLayout(nil, win, saved.Locator)
	}
	if !ok {
		return Streamed{Text: string(w.buf), Bytes: w.bytes, Saved: saved, Spilled: true}, fmt.Errorf("spill-policy: the spill notice exceeds %s %d; full output kept at %s", w.p.capName(), w.p.cap, saved.Locator)
	}
	return Streamed{Text: text, Spilled: true, Saved: saved, Bytes: w.bytes}, nil
}

func removeQuiet(p string) { _ = os.Remove(p) }
