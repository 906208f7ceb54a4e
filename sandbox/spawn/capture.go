package spawn

import (
	"os"
	"sync"
	"unicode/utf8"

	"github.com/dshsim/dshsim/sandbox/outfile"
)

// DefaultTailBytes is the per-stream in-memory tail.
const DefaultTailBytes = 64000

// Stream is one captured output stream.
type Stream struct {
	// Text is the retained text: everything, or the tail when Truncated.
	Text string
	// Truncated reports that the stream outgrew the tail and only its end is in Text.
	Truncated bool
	// FullPath is the private (0600) file holding the complete stream once it
	// overflowed; "" when it did not overflow or the file could not be written.
	FullPath string
}

// capture keeps a bounded tail of a stream in memory and, from the moment the
// stream outgrows it, the complete stream in a private file.
type capture struct {
	mu         sync.Mutex
	max        int
	buf        []byte
	overflowed bool
	file       *os.File
	fileFailed bool
	dir, kind  string
}

func newCapture(max int, dir, kind string) *capture {
	return &capture{max: max, dir: dir, kind: kind}
}

func (c *capture) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.overflowed && len(c.buf)+len(p) <= c.max {
		c.buf = append(c.buf, p...)
		return len(p), nil
	}
	if !c.overflowed {
		c.overflowed = true
		f, err := outfile.Create(c.dir, c.kind)
		if err != nil {
			c.fileFailed = true
		} else {
			c.file = f
			c.writeFile(c.buf)
		}
	}
	c.writeFile(p)
	c.buf = append(c.buf, p...)
	if len(c.buf) > c.max {
		c.buf = c.buf[len(c.buf)-c.max:]
	}
	return len(p), nil
}

func (c *capture) writeFile(p []byte) {
	if c.file == nil || c.fileFailed {
		return
	}
	if _, err := c.file.Write(p); err != nil {
		c.fileFailed = true
	}
}

// close closes the full-output file (the path stays valid).
func (c *capture) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.file != nil {
		if err := c.file.Close(); err != nil {
			c.fileFailed = true
		}
	}
}

func (c *capture) snapshot() Stream {
	c.mu.Lock()
	defer c.mu.Unlock()
	b := c.buf
	if c.overflowed {
		// Do not start the tail in the middle of a UTF-8 sequence.
		for i := 0; i < utf8.UTFMax && len(b) > 0 && !utf8.RuneStart(b[0]); i++ {
			b = b[1:]
		}
	}
	s := Stream{Text: string(b), Truncated: c.overflowed}
	if c.file != nil && !c.fileFailed {
		s.FullPath = c.file.Name()
	}
	return s
}
