package jobs

import (
	"os"
	"sync"

	"github.com/dshsim/dshsim/internal/jstext"
	"github.com/dshsim/dshsim/sandbox/outfile"
)

// Capture is an io.Writer for one output stream: it keeps the last Max bytes
// in memory and, from the first overflow on, writes the complete stream to a
// private file (0600, created exclusively) as long as it stays within
// SpillCap bytes; past that the file is removed and the stream is lossy.
type Capture struct {
	mu       sync.Mutex
	max      int
	spillCap int64
	dir      func() (string, error)
	name     string

	buf   []byte // ring of the last max bytes
	start int    // index of the oldest byte in buf when full
	full  bool
	total int64 // bytes ever written

	file   *os.File
	path   string
	broken bool // the full-output file is unavailable
}

// NewCapture returns a capture keeping max bytes in memory; dir returns the
// directory for the full-output file (called on first overflow), name is the
// file name suffix (e.g. "stdout"), spillCap bounds the file.
func NewCapture(max int, spillCap int64, dir func() (string, error), name string) *Capture {
	if max <= 0 {
		max = 1
	}
	return &Capture{max: max, spillCap: spillCap, dir: dir, name: name, buf: make([]byte, 0, min(max, 4096))}
}

// Write appends p; it never fails (a broken full-output file only makes the
// stream lossy).
func (c *Capture) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.broken && c.file == nil && c.total+int64(len(p)) > int64(c.max) {
		c.openFile()
	}
	if c.file != nil {
		if c.total+int64(len(p)) > c.spillCap {
			c.dropFile()
		} else if _, err := c.file.Write(p); err != nil {
			c.dropFile()
		}
	}
	c.total += int64(len(p))
	c.push(p)
	return len(p), nil
}

func (c *Capture) openFile() {
	if c.dir == nil {
		c.broken = true
		return
	}
	d, err := c.dir()
	if err != nil {
		c.broken = true
		return
	}
	f, err := outfile.Create(d, c.name)
	if err != nil {
		c.broken = true
		return
	}
	// the ring still holds everything written so far
	if _, err := f.Write(c.ordered()); err != nil {
		f.Close()
		os.Remove(f.Name())
		c.broken = true
		return
	}
	c.file, c.path = f, f.Name()
}

func (c *Capture) dropFile() {
	c.file.Close()
	os.Remove(c.path)
	c.file, c.path, c.broken = nil, "", true
}

func (c *Capture) push(p []byte) {
	if len(p) >= c.max {
		c.buf = append(c.buf[:0], p[len(p)-c.max:]...)
		c.start, c.full = 0, true
		return
	}
	if !c.full {
		if len(c.buf)+len(p) <= c.max {
			c.buf = append(c.buf, p...)
			return
		}
		// grow to max and wrap
		old := c.ordered()
		c.buf = make([]byte, c.max)
		n := copy(c.buf, old[len(old)-min(len(old), c.max-len(p)):])
		copy(c.buf[n:], p)
		c.start, c.full = 0, true // n+len(p) == max because len(old)+len(p) > max
		return
	}
	k := copy(c.buf[c.start:], p)
	copy(c.buf, p[k:])
	c.start = (c.start + len(p)) % c.max
}

func (c *Capture) ordered() []byte {
	if !c.full {
		return append([]byte(nil), c.buf...)
	}
	out := make([]byte, 0, c.max)
	out = append(out, c.buf[c.start:]...)
	return append(out, c.buf[:c.start]...)
}

// Close finishes the full-output file, if any.
func (c *Capture) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.file != nil {
		return c.file.Close()
	}
	return nil
}

// Tail returns the retained text, whether the stream was truncated, and the
// full-output path ("" when unavailable).
func (c *Capture) Tail() (text string, truncated bool, path string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return decode(c.ordered()), c.total > int64(len(c.buf)), c.path
}

// Total returns the number of bytes written so far.
func (c *Capture) Total() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.total
}

// Since returns the bytes written after offset cursor, the new cursor, and
// whether some bytes after cursor are no longer in memory (lost), in which
// case the retained tail is returned.
func (c *Capture) Since(cursor int64) (text string, next int64, lost bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	kept := int64(len(c.buf))
	oldest := c.total - kept
	data := c.ordered()
	if cursor < oldest {
		return decode(data), c.total, true
	}
	return decode(data[cursor-oldest:]), c.total, false
}

// Path returns the full-output file path, "" when there is none.
func (c *Capture) Path() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.path
}

// decode turns bytes into text as upstream decodes a stream (jstext.Decode:
// one U+FFFD per ill-formed subpart, e.g. a sequence cut at the start of the
// tail).
func decode(b []byte) string { return jstext.Decode(b) }
