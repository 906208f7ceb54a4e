package replay

import (
	"context"
	"encoding/gob"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"github.com/dshsim/dshsim/harness/replay/recording"
	"github.com/dshsim/dshsim/llm"
	"github.com/dshsim/dshsim/llm/deepseek"
	"github.com/dshsim/dshsim/pipeline"
)

// A recording session runs contained, as a replay does, and holds no key:
// the model is reached from dsh-record's own process on the host, which
// holds the key and relays the model's chunks to the contained child over
// a socket pair (the relay). The child sends a model request or a question
// for the person at the terminal; the host answers with the stream's
// chunks and its end, or the answer. Frames are gob-encoded (the model's
// types write upstream's JSON, which does not read back), one per message,
// each direction in order.

// relayFrame is one message of the relay.
type relayFrame struct {
	// ID names the stream or question the frame belongs to.
	ID uint64
	// Model (child to host) starts a stream of this request; Session is
	// the session id its headers carry.
	Model   *deepseek.Request
	Session string
	// Cancel (child to host) stops stream ID.
	Cancel bool
	// Ask (child to host) asks the person at the terminal.
	Ask *relayAsk
	// Chunk (host to child) is one chunk of stream ID.
	Chunk *llm.Chunk
	// Done (host to child) ends stream ID: Failure when the model call
	// failed, Error when it ended otherwise than cleanly.
	Done    bool
	Failure *llm.Failure
	Error   string
	// Answer (host to child) answers question ID (or Error says why not).
	Answer *recording.Answer
}

// relayAsk is an approval the child asks the person at the terminal about.
type relayAsk struct {
	Tool, Call, Reason, Subject string
}

// askOf is the question about req.
func askOf(req pipeline.ApprovalRequest) *relayAsk {
	return &relayAsk{Tool: req.ToolName, Call: req.CallID, Reason: req.Reason, Subject: req.Subject()}
}

// relayClient is the child's end: it streams model calls and asks
// questions through the host.
type relayClient struct {
	wmu   sync.Mutex
	enc   *gob.Encoder
	mu    sync.Mutex
	next  uint64
	calls map[uint64]*relayCall
	err   error // the relay broke (no call can be made)
}

// relayCall is one stream or question in flight.
type relayCall struct {
	frames chan relayFrame
	done   chan struct{}
}

// newRelayClient starts reading conn (the child's end).
func newRelayClient(conn io.ReadWriter) *relayClient {
	c := &relayClient{enc: gob.NewEncoder(conn), calls: map[uint64]*relayCall{}}
	go c.read(gob.NewDecoder(conn))
	return c
}

// read hands each frame to its call until the relay breaks.
func (c *relayClient) read(dec *gob.Decoder) {
	for {
		var f relayFrame
		if err := dec.Decode(&f); err != nil {
			c.mu.Lock()
			c.err = fmt.Errorf("the relay to dsh-record broke: %w", err)
			for _, call := range c.calls {
				close(call.frames)
			}
			c.calls = map[uint64]*relayCall{}
			c.mu.Unlock()
			return
		}
		c.mu.Lock()
		call := c.calls[f.ID]
		c.mu.Unlock()
		if call == nil {
			continue // a call that ended already
		}
		select {
		case call.frames <- f:
		case <-call.done:
		}
	}
}

// start sends f under a new id and returns the call its answers come to.
func (c *relayClient) start(f relayFrame) (uint64, *relayCall, error) {
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return 0, nil, c.err
	}
	c.next++
	id := c.next
	call := &relayCall{frames: make(chan relayFrame, 64), done: make(chan struct{})}
	c.calls[id] = call
	c.mu.Unlock()
	f.ID = id
	if err := c.send(f); err != nil {
		c.end(id, call)
		return 0, nil, err
	}
	return id, call, nil
}

func (c *relayClient) send(f relayFrame) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if err := c.enc.Encode(f); err != nil {
		return fmt.Errorf("the relay to dsh-record broke: %w", err)
	}
	return nil
}

// end forgets call id.
func (c *relayClient) end(id uint64, call *relayCall) {
	c.mu.Lock()
	if c.calls[id] == call {
		delete(c.calls, id)
	}
	c.mu.Unlock()
	close(call.done)
}

// Stream streams r through the host, as deepseek.Client.Stream does: emit
// gets every chunk, a failed call is an *llm.Failure. Cancelling ctx stops
// the stream on the host too.
func (c *relayClient) Stream(ctx context.Context, r deepseek.Request, session string, emit func(llm.Chunk) error) error {
	id, call, err := c.start(relayFrame{Model: &r, Session: session})
	if err != nil {
		return err
	}
	defer c.end(id, call)
	stop := func(err error) error {
		_ = c.send(relayFrame{ID: id, Cancel: true})
		return err
	}
	for {
		select {
		case <-ctx.Done():
			return stop(context.Cause(ctx))
		case f, ok := <-call.frames:
			switch {
			case !ok:
				return c.broken()
			case f.Chunk != nil:
				if err := emit(*f.Chunk); err != nil {
					return stop(err)
				}
			case f.Done && f.Failure != nil:
				return f.Failure
			case f.Done && f.Error != "":
				return errors.New(f.Error)
			case f.Done:
				return nil
			}
		}
	}
}

// ask asks the person at the host's terminal about req.
func (c *relayClient) ask(ctx context.Context, req pipeline.ApprovalRequest) (recording.Answer, error) {
	id, call, err := c.start(relayFrame{Ask: askOf(req)})
	if err != nil {
		return recording.Answer{}, err
	}
	defer c.end(id, call)
	select {
	case <-ctx.Done():
		return recording.Answer{}, context.Cause(ctx)
	case f, ok := <-call.frames:
		switch {
		case !ok:
			return recording.Answer{}, c.broken()
		case f.Answer != nil:
			return *f.Answer, nil
		}
		return recording.Answer{}, errors.New(f.Error)
	}
}

func (c *relayClient) broken() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// relayHost is the host's end: it streams each request the child sends
// from the model with the key, which only it holds, and asks the person
// at its terminal.
type relayHost struct {
	client deepseek.Client // the key's lookup, the base URL, the user id
	key    string          // redacted from everything the child gets
	model  deepseek.Request
	ask    func(context.Context, relayAsk) (recording.Answer, error)
	wmu    sync.Mutex
	enc    *gob.Encoder
	mu     sync.Mutex
	cancel map[uint64]context.CancelFunc
	wg     sync.WaitGroup
}

// serve answers the child on conn until the relay closes (the child
// ended) or breaks (a frame that does not decode: conn is then closed, so
// the child's calls fail rather than wait), then stops what is still in
// flight.
func (h *relayHost) serve(ctx context.Context, conn io.ReadWriteCloser) {
	ctx, cancel := context.WithCancel(ctx)
	defer func() { cancel(); h.wg.Wait() }()
	h.enc, h.cancel = gob.NewEncoder(conn), map[uint64]context.CancelFunc{}
	dec := gob.NewDecoder(conn)
	for {
		var f relayFrame
		if err := dec.Decode(&f); err != nil {
			conn.Close()
			return
		}
		switch {
		case f.Model != nil:
			sctx, scancel := context.WithCancel(ctx)
			h.mu.Lock()
			h.cancel[f.ID] = scancel
			h.mu.Unlock()
			h.wg.Go(func() { h.stream(sctx, f) })
		case f.Cancel:
			h.mu.Lock()
			if c := h.cancel[f.ID]; c != nil {
				c()
			}
			h.mu.Unlock()
		case f.Ask != nil:
			h.wg.Go(func() { h.answer(ctx, f.ID, *f.Ask) })
		}
	}
}

// stream streams f's request: the model, thinking and effort are the
// host's own, whatever the child asked for; every chunk and the end go
// back with the key redacted.
func (h *relayHost) stream(ctx context.Context, f relayFrame) {
	defer func() {
		h.mu.Lock()
		delete(h.cancel, f.ID)
		h.mu.Unlock()
	}()
	r := *f.Model
	r.Model, r.Thinking, r.ReasoningEffort = h.model.Model, h.model.Thinking, h.model.ReasoningEffort
	client := h.client
	client.SessionID = f.Session
	err := client.Stream(ctx, r, func(c llm.Chunk) error {
		return h.send(relayFrame{ID: f.ID, Chunk: redactChunk(c, h.key)})
	})
	end := relayFrame{ID: f.ID, Done: true}
	var failure *llm.Failure
	switch {
	case errors.As(err, &failure):
		fc := *failure
		fc.Message = redactText(fc.Message, h.key)
		end.Failure = &fc
	case err != nil:
		end.Error = redactText(err.Error(), h.key)
	}
	_ = h.send(end)
}

// answer asks the person at the terminal and sends the answer back.
func (h *relayHost) answer(ctx context.Context, id uint64, q relayAsk) {
	a, err := h.ask(ctx, q)
	f := relayFrame{ID: id, Answer: &a}
	if err != nil {
		f = relayFrame{ID: id, Error: redactText(err.Error(), h.key)}
	}
	_ = h.send(f)
}

func (h *relayHost) send(f relayFrame) error {
	h.wmu.Lock()
	defer h.wmu.Unlock()
	return h.enc.Encode(f)
}

// redactText replaces the key in s (a server may echo it).
func redactText(s, key string) string {
	if key == "" {
		return s
	}
	return strings.ReplaceAll(s, key, "<redacted>")
}

// redactChunk is c with the key replaced in every text it carries.
func redactChunk(c llm.Chunk, key string) *llm.Chunk {
	c.Text, c.ID, c.ArgumentsDelta = redactText(c.Text, key), redactText(c.ID, key), redactText(c.ArgumentsDelta, key)
	if c.Name != nil {
		n := redactText(*c.Name, key)
		c.Name = &n
	}
	if c.Block != nil {
		b := redactBlock(*c.Block, key)
		c.Block = &b
	}
	if c.Reason != nil && c.Reason.Failure != nil {
		f := *c.Reason.Failure
		f.Message = redactText(f.Message, key)
		c.Reason = &llm.Finish{Kind: c.Reason.Kind, Failure: &f}
	}
	return &c
}

func redactBlock(b llm.Block, key string) llm.Block {
	b.Text, b.ID, b.Name, b.Arguments, b.ToolCallID = redactText(b.Text, key), redactText(b.ID, key), redactText(b.Name, key), redactText(b.Arguments, key), redactText(b.ToolCallID, key)
	content := make([]llm.Block, len(b.Content))
	for i, c := range b.Content {
		content[i] = redactBlock(c, key)
	}
	if b.Content != nil {
		b.Content = content
	}
	return b
}

// askHere asks the person at this process's terminal (/dev/tty) about q;
// without a terminal the prompt fails closed (the call is not run and the
// recording fails).
func askHere(ctx context.Context, q relayAsk) (recording.Answer, error) {
	tty, err := os.OpenFile("/dev/tty", os.O_RDWR, 0)
	if err != nil {
		return recording.Answer{}, fmt.Errorf("the model's %s call %s needs approval (%s), input.json has no permissionAnswers and there is no terminal to ask (%v)", q.Tool, q.Call, q.Reason, err)
	}
	defer tty.Close()
	return askOn(ctx, tty, tty, q)
}
