package session

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sync"
	"time"
)

// Header is the first line of a log. A delegated child's header also names
// its agent preset, its parent's session and origin "subagent" (upstream
// packages/core/session/src/types.ts:75-98); a root session's header has
// none of them.
type Header struct {
	Type          string `json:"type"`
	Version       int    `json:"version"`
	ID            string `json:"id"`
	CreatedAt     int64  `json:"createdAt"`
	Cwd           string `json:"cwd"`
	AgentPreset   string `json:"agentPreset,omitempty"`
	ParentSession string `json:"parentSession,omitempty"`
	// SeedLength is the number of events a forked child's log starts with,
	// copied from its parent's completed turns (0: none).
	SeedLength      int    `json:"seedLength,omitempty"`
	Origin          string `json:"origin,omitempty"`
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

// Error returns "file:line: problem".
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
	// size is the file size after this Log's last append (or the header
	// write); bytes beyond it were appended by someone else and are scanned
	// for their seqs and a torn tail before the next append.
	size int64
	// torn is set when this Log's own last write(2) was cut short inside a
	// line: the next append must terminate it first.
	torn bool
	// checks vet this Log's appends ([Log.AddCheck]); nextCheck keys them.
	checks    map[int]Check
	nextCheck int
}

// A Check vets an event before a Log appends it: a non-nil error refuses
// the append, which returns that error unchanged, and the log does not
// change. It runs with the Log's append lock and the file's lock held
// (reading the log through [Read] or [Log.Events] is fine; appending to it
// deadlocks).
type Check func(typ string, data json.RawMessage) error

// AddCheck makes c vet every later append through this Log (appenders
// holding another descriptor of the file are not vetted) and returns what
// removes it. It takes the append lock: an append in progress when it is
// called has been written when it returns, and every append after it is
// vetted.
func (l *Log) AddCheck(c Check) (remove func()) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.checks == nil {
		l.checks = map[int]Check{}
	}
	id := l.nextCheck
	l.nextCheck++
	l.checks[id] = c
	return func() {
		l.mu.Lock()
		delete(l.checks, id)
		l.mu.Unlock()
	}
}

// vet runs the checks in the order they were added; the caller holds l.mu.
func (l *Log) vet(typ string, data json.RawMessage) error {
	ids := make([]int, 0, len(l.checks))
	for id := range l.checks {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		if err := l.checks[id](typ, data); err != nil {
			return err
		}
	}
	return nil
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
	line = append(line, '\n')
	if _, err := f.Write(line); err != nil {
		f.Close()
		return nil, fmt.Errorf("session: write header %s: %w", path, err)
	}
	l.f = f
	l.size = int64(len(line))
	return l, nil
}

// CreateSeeded creates a new log at path whose first events are seed,
// written as they are (a forked child's copy of its parent's completed
// turns): their seqs must run 0, 1, ... in order. Later appends continue
// the numbering. It fails if the file exists.
func CreateSeeded(path string, h Header, seed []Event, opts ...Option) (*Log, error) {
	var buf []byte
	for i, e := range seed {
		if e.Seq != int64(i) {
			return nil, fmt.Errorf("session: seed event %d (%s) has seq %d; a seed runs 0, 1, ... in order", i, e.Type, e.Seq)
		}
		line, err := json.Marshal(e)
		if err != nil {
			return nil, fmt.Errorf("session: seed event %d: %w", i, err)
		}
		buf = append(append(buf, line...), '\n')
	}
	l, err := Create(path, h, opts...)
	if err != nil {
		return nil, err
	}
	if len(buf) == 0 {
		return l, nil
	}
	n, err := writeOnce(l.f, buf)
	l.size += int64(n)
	if err == nil && n != len(buf) {
		err = fmt.Errorf("short write %d of %d bytes", n, len(buf))
	}
	if err != nil {
		l.Close()
		os.Remove(path)
		return nil, fmt.Errorf("session: write the seed of %s: %w", path, err)
	}
	l.next = int64(len(seed))
	return l, nil
}

// Open opens an existing log for appending. A torn last line (a crash in
// the middle of a write) stays where it is and stays reported by [Read]; the
// next append terminates it with a newline in the same write(2), so the torn
// bytes are never merged into the next event.
func Open(path string, opts ...Option) (*Log, error) {
	c, err := Read(path)
	if err != nil {
		return nil, err
	}
	l := &Log{path: path, header: c.Header, now: time.Now}
	for _, o := range opts {
		o(l)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return nil, fmt.Errorf("session: open %s: %w", path, err)
	}
	// size 0: the first append scans the whole file for the last seq and a torn tail.
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
	var e Event
	err = withLock(l.f, func() error {
		if err := l.vet(typ, raw); err != nil {
			return err
		}
		prefix, err := l.catchUp()
		if err != nil {
			return err
		}
		e = Event{Type: typ, Seq: l.next, Time: l.now().UnixMilli(), Data: raw, SourceEventSeqs: o.SourceEventSeqs}
		if o.SurfaceOp != nil {
			if e.SurfaceOp, err = json.Marshal(o.SurfaceOp); err != nil {
				return err
			}
		}
		line, err := json.Marshal(e)
		if err != nil {
			return err
		}
		buf := make([]byte, 0, len(prefix)+len(line)+1)
		buf = append(append(append(buf, prefix...), line...), '\n')
		n, err := writeOnce(l.f, buf)
		l.size += int64(n)
		if n > 0 {
			l.torn = buf[n-1] != '\n'
		}
		if err != nil {
			return fmt.Errorf("session: append %s to %s: %w", typ, l.path, err)
		}
		if n != len(buf) {
			return fmt.Errorf("session: append %s to %s: short write %d of %d bytes (the torn line is terminated by the next append)", typ, l.path, n, len(buf))
		}
		l.next++
		return nil
	})
	if err != nil {
		return Event{}, err
	}
	return e, nil
}

// catchUp scans what other appenders wrote since this Log's last append: it
// moves next past their seqs and returns "\n" when the file ends in a torn
// line that must be terminated before the next event. The caller holds the
// file lock.
func (l *Log) catchUp() ([]byte, error) {
	fi, err := l.f.Stat()
	if err != nil {
		return nil, fmt.Errorf("session: stat %s: %w", l.path, err)
	}
	size := fi.Size()
	if size < l.size {
		return nil, fmt.Errorf("session: %s shrank from %d to %d bytes; an append-only log was truncated", l.path, l.size, size)
	}
	if size == l.size {
		if l.torn {
			return []byte("\n"), nil
		}
		return nil, nil
	}
	r, err := os.Open(l.path)
	if err != nil {
		return nil, fmt.Errorf("session: read %s: %w", l.path, err)
	}
	defer r.Close()
	tail := make([]byte, size-l.size)
	if _, err := r.ReadAt(tail, l.size); err != nil {
		return nil, fmt.Errorf("session: read %s: %w", l.path, err)
	}
	l.size = size
	for _, ln := range bytes.Split(tail, []byte("\n")) {
		var s struct {
			Seq *int64 `json:"seq"`
		}
		if json.Unmarshal(ln, &s) == nil && s.Seq != nil && *s.Seq >= l.next {
			l.next = *s.Seq + 1
		}
	}
	l.torn = tail[len(tail)-1] != '\n'
	if l.torn {
		return []byte("\n"), nil
	}
	return nil, nil
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

// NewID returns a random version-4 UUID (a session's or a message's id).
func NewID() string {
	var b [16]byte
	if _, err := io.ReadFull(rand.Reader, b[:]); err != nil {
		panic(err) // crypto/rand never fails on Linux
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
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
		case KindTurnEnd:
			return false
		case KindTurnStart:
			return true
		}
	}
	return false
}
