// Package session is the append-only session log (JSON Lines).
//
// Line 1 is the header {"type":"session","version":0,"id","createdAt","cwd",
// "delegationDepth"}; every later line is one event {type, seq, time, data} with
// optional sourceEventSeqs and surfaceOp. The log is the single source of truth
// for session state (sandbox mode, approval policy, presets): readers fold it on
// every request and keep no process state.
//
// # Durability
//
// Each event is written with exactly one write(2) on a descriptor opened with
// O_APPEND, so concurrent appenders never interleave bytes. A crash in the middle
// of a write leaves a torn last line; [Read] reports it with its line number and
// leaves it out, and [Open] terminates it with a newline before appending, so the
// torn bytes are never merged into the next event.
package session

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"
)

// Header is the first line of a log.
type Header struct {
	Type            string `json:"type"`
	Version         int    `json:"version"`
	ID              string `json:"id"`
	CreatedAt       int64  `json:"createdAt"`
	Cwd             string `json:"cwd"`
	DelegationDepth int    `json:"delegationDepth"`
}

// Event is one logged event.
type Event struct {
	Type            string          `json:"type"`
	Seq             int64           `json:"seq"`
	Time            int64           `json:"time"`
	Data            json.RawMessage `json:"data"`
	SourceEventSeqs []int64         `json:"sourceEventSeqs,omitempty"`
	SurfaceOp       json.RawMessage `json:"surfaceOp,omitempty"`
}

// LineError is a line of a log file that could not be decoded.
type LineError struct {
	File string
	Line int // 1-based
	Err  error
}

func (e *LineError) Error() string { return fmt.Sprintf("%s:%d: %v", e.File, e.Line, e.Err) }

// Contents is a decoded log file.
type Contents struct {
	Header Header
	Events []Event
	// Bad lists lines left out: a torn last line, or any undecodable line.
	Bad []*LineError
}

// Read decodes the log at path. A missing or undecodable header is an error;
// undecodable event lines are reported in Contents.Bad and left out.
func Read(path string) (*Contents, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(path, data)
}

// Parse decodes log bytes; name is used in error messages.
func Parse(name string, data []byte) (*Contents, error) {
	c := &Contents{}
	lines := bytes.Split(data, []byte("\n"))
	if len(lines) > 0 && len(lines[len(lines)-1]) == 0 {
		lines = lines[:len(lines)-1]
	}
	if len(lines) == 0 {
		return nil, &LineError{File: name, Line: 1, Err: errors.New("empty log: missing session header")}
	}
	if err := json.Unmarshal(lines[0], &c.Header); err != nil || c.Header.Type != "session" {
		if err == nil {
			err = fmt.Errorf("field type: want \"session\", got %q", c.Header.Type)
		}
		return nil, &LineError{File: name, Line: 1, Err: fmt.Errorf("bad session header: %w", err)}
	}
	for i, ln := range lines[1:] {
		lineNo := i + 2
		if len(bytes.TrimSpace(ln)) == 0 {
			continue
		}
		var e Event
		if err := json.Unmarshal(ln, &e); err != nil {
			torn := i == len(lines)-2 && !bytes.HasSuffix(data, []byte("\n"))
			if torn {
				err = fmt.Errorf("torn last line (no newline; a write was interrupted): %w", err)
			}
			c.Bad = append(c.Bad, &LineError{File: name, Line: lineNo, Err: err})
			continue
		}
		if e.Type == "" {
			c.Bad = append(c.Bad, &LineError{File: name, Line: lineNo, Err: errors.New("field type: missing")})
			continue
		}
		c.Events = append(c.Events, e)
	}
	return c, nil
}

// Log is an open, append-only session log.
type Log struct {
	path   string
	header Header
	now    func() time.Time

	mu   sync.Mutex
	f    *os.File
	next int64
}

// Option configures a Log.
type Option func(*Log)

// WithClock sets the clock used for event times (tests use a fixed clock).
func WithClock(now func() time.Time) Option { return func(l *Log) { l.now = now } }

// Create creates a new log at path with header h (Type and Version are set).
// It fails if the file exists.
func Create(path string, h Header, opts ...Option) (*Log, error) {
	h.Type, h.Version = "session", 0
	l := &Log{path: path, header: h, now: time.Now}
	for _, o := range opts {
		o(l)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("session: create %s: %w", path, err)
	}
	line, err := json.Marshal(h)
	if err != nil {
		f.Close()
		return nil, err
	}
	if _, err := f.Write(append(line, '\n')); err != nil {
		f.Close()
		return nil, fmt.Errorf("session: write header %s: %w", path, err)
	}
	l.f = f
	return l, nil
}

// Open opens an existing log for appending. A torn last line is terminated with
// a newline first, so the next event starts on its own line; it stays reported
// by [Read].
func Open(path string, opts ...Option) (*Log, error) {
	c, err := Read(path)
	if err != nil {
		return nil, err
	}
	l := &Log{path: path, header: c.Header, now: time.Now}
	for _, o := range opts {
		o(l)
	}
	for _, e := range c.Events {
		if e.Seq >= l.next {
			l.next = e.Seq + 1
		}
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return nil, fmt.Errorf("session: open %s: %w", path, err)
	}
	if fi, err := f.Stat(); err == nil && fi.Size() > 0 {
		last := make([]byte, 1)
		if r, err := os.Open(path); err == nil {
			_, _ = r.ReadAt(last, fi.Size()-1)
			r.Close()
		}
		if last[0] != '\n' {
			if _, err := f.Write([]byte("\n")); err != nil {
				f.Close()
				return nil, err
			}
		}
	}
	l.f = f
	return l, nil
}

// Path returns the file path.
func (l *Log) Path() string { return l.path }

// Header returns the header.
func (l *Log) Header() Header { return l.header }

// ID returns the session id.
func (l *Log) ID() string { return l.header.ID }

// AppendOptions are optional event fields.
type AppendOptions struct {
	SourceEventSeqs []int64
	SurfaceOp       any
}

// Append appends one event with data marshalled as JSON, in one write(2).
func (l *Log) Append(typ string, data any) (Event, error) {
	return l.AppendWith(typ, data, AppendOptions{})
}

// AppendWith appends one event with optional fields.
func (l *Log) AppendWith(typ string, data any, o AppendOptions) (Event, error) {
	raw, err := json.Marshal(data)
	if err != nil {
		return Event{}, fmt.Errorf("session: event %s: %w", typ, err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return Event{}, errors.New("session: log is closed")
	}
	e := Event{Type: typ, Seq: l.next, Time: l.now().UnixMilli(), Data: raw, SourceEventSeqs: o.SourceEventSeqs}
	if o.SurfaceOp != nil {
		if e.SurfaceOp, err = json.Marshal(o.SurfaceOp); err != nil {
			return Event{}, err
		}
	}
	line, err := json.Marshal(e)
	if err != nil {
		return Event{}, err
	}
	line = append(line, '\n')
	n, err := l.f.Write(line)
	if err != nil {
		return Event{}, fmt.Errorf("session: append %s to %s: %w", typ, l.path, err)
	}
	if n != len(line) {
		return Event{}, fmt.Errorf("session: append %s to %s: short write %d of %d bytes", typ, l.path, n, len(line))
	}
	l.next++
	return e, nil
}

// Events re-reads the log from disk and returns its decodable events.
func (l *Log) Events() ([]Event, error) {
	c, err := Read(l.path)
	if err != nil {
		return nil, err
	}
	return c.Events, nil
}

// Close closes the log.
func (l *Log) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	return err
}

// Last returns the last event of type typ.
func Last(events []Event, typ string) (Event, bool) {
	for i := len(events) - 1; i >= 0; i-- {
		if events[i].Type == typ {
			return events[i], true
		}
	}
	return Event{}, false
}

// LastField decodes field of the last event of type typ; ok is false when there is none.
func LastField(events []Event, typ, field string) (string, bool) {
	e, ok := Last(events, typ)
	if !ok {
		return "", false
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(e.Data, &m) != nil {
		return "", false
	}
	var s string
	if json.Unmarshal(m[field], &s) != nil {
		return "", false
	}
	return s, true
}

// OpenTurn reports whether the log has a turn/start with no later turn/end.
func OpenTurn(events []Event) bool {
	for i := len(events) - 1; i >= 0; i-- {
		switch events[i].Type {
		case "turn/end":
			return false
		case "turn/start":
			return true
		}
	}
	return false
}
