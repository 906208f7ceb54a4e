package noderuntime

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync"
	"unicode/utf8"

	"github.com/dshsim/dshsim/internal/jsjson"
)

// A frame is a 4-byte big-endian length and that many bytes of UTF-8 JSON.

// errBadFrameSize is a frame length of 0 or above the limit.
func errBadFrameSize(max int) error {
	return fmt.Errorf("control frame exceeds %d bytes or is empty", max)
}

// frame encodes one message body.
func frame(body []byte) []byte {
	out := make([]byte, 4+len(body))
	binary.BigEndian.PutUint32(out, uint32(len(body)))
	copy(out[4:], body)
	return out
}

// message is one checked frame from the child.
type message struct {
	typ string
	v   *jsjson.Value
}

// readMessage reads one frame and parses it as a JSON object with a string
// "type". io.EOF is a clean end between frames.
func readMessage(r io.Reader, max int) (message, error) {
	var head [4]byte
	if _, err := io.ReadFull(r, head[:]); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return message{}, errors.New("invalid control frame: truncated length")
		}
		return message{}, err
	}
	n := binary.BigEndian.Uint32(head[:])
	if n == 0 || uint64(n) > uint64(max) {
		return message{}, errBadFrameSize(max)
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(r, body); err != nil {
		return message{}, errors.New("invalid control frame: truncated body")
	}
	// The channel carries UTF-8 (JSON.parse would read a stray byte as
	// U+FFFD; a frame with one was not written by our runtime).
	if !utf8.Valid(body) {
		return message{}, errors.New("invalid control frame")
	}
	v, err := jsjson.Parse(body)
	if err != nil || v.Kind != jsjson.Object {
		return message{}, errors.New("invalid control frame")
	}
	t := v.Get("type")
	if t == nil || t.Kind != jsjson.String {
		return message{}, errors.New("invalid control frame")
	}
	return message{typ: t.Str(), v: v}, nil
}

// integer returns the value of a member that must be a non-negative safe integer.
func integer(v *jsjson.Value, key string) (int64, bool) {
	x := v.Get(key)
	if x == nil || x.Kind != jsjson.Number || x.Num < 0 || x.Num > 1<<53 || x.Num != float64(int64(x.Num)) {
		return 0, false
	}
	return int64(x.Num), true
}

// str returns the value of a member that must be a string.
func str(v *jsjson.Value, key string) (*jsjson.Value, bool) {
	x := v.Get(key)
	if x == nil || x.Kind != jsjson.String {
		return nil, false
	}
	return x, true
}

// outbox writes frames to the child in order from its own goroutine. send
// never blocks: a child that stops reading its end (a busy loop) must not
// stall the host's loop, whose timers end the run.
type outbox struct {
	mu    sync.Mutex
	queue [][]byte
	wake  chan struct{}
}

func newOutbox(w io.Writer, quit <-chan struct{}) *outbox {
	o := &outbox{wake: make(chan struct{}, 1)}
	go func() {
		for {
			select {
			case <-o.wake:
			case <-quit:
				return
			}
			for {
				o.mu.Lock()
				if len(o.queue) == 0 {
					o.mu.Unlock()
					break
				}
				f := o.queue[0]
				o.queue = o.queue[1:]
				o.mu.Unlock()
				if _, err := w.Write(f); err != nil {
					return
				}
			}
		}
	}()
	return o
}

func (o *outbox) send(f []byte) {
	o.mu.Lock()
	o.queue = append(o.queue, f)
	o.mu.Unlock()
	select {
	case o.wake <- struct{}{}:
	default:
	}
}
