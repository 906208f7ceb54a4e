package cli

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"golang.org/x/sys/unix"

	"github.com/dshsim/dshsim/harness/replay"
)

// progressAfter is how long a run lasts before a terminal shows its progress:
// a short run prints its report and nothing else.
const progressAfter = 2 * time.Second

// progress is the one self-rewriting line a terminal shows on stderr while
// a run lasts: recordings done of total and the ones replaying now. It is
// drawn only once the run has lasted its delay, and cleared when the run
// ends. It is also the replays' own stderr: what they write goes out on
// lines of its own, the progress line redrawn after it.
type progress struct {
	mu      sync.Mutex
	w       io.Writer
	columns func() int // the terminal's width (0: unknown)
	total   int
	done    int
	running []string // names, in the order they started
	ready   bool     // the run has lasted the delay
	shown   bool     // the line is on the screen
	partial bool     // the last write through ended inside a line
	stopped bool
	timer   *time.Timer
}

// newProgress starts the progress of a run of total recordings on w, a
// terminal of columns() columns, shown from after on.
func newProgress(w io.Writer, columns func() int, total int, after time.Duration) *progress {
	p := &progress{w: w, columns: columns, total: total}
	if after <= 0 {
		p.ready = true
		return p
	}
	p.timer = time.AfterFunc(after, func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		p.ready = true
		p.draw()
	})
	return p
}

// hook makes the run report to p: as each replay starts and ends, and the
// replays' own output.
func (p *progress) hook(o *replay.RunOptions) {
	o.Starting = p.started
	o.Progress = p.finished
	o.Stderr = p
}

func (p *progress) started(dir string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.running = append(p.running, filepath.Base(filepath.Clean(dir)))
	p.draw()
}

func (p *progress) finished(done, _ int, r *replay.Result) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done = done
	if i := slices.Index(p.running, r.Name); i >= 0 {
		p.running = append(p.running[:i], p.running[i+1:]...)
	}
	p.draw()
}

// Write passes what a replay writes to the terminal: the progress line is
// cleared first and redrawn after a whole line.
func (p *progress) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.clear()
	n, err := p.w.Write(b)
	if len(b) > 0 {
		p.partial = !bytes.HasSuffix(b, []byte("\n"))
	}
	p.draw()
	return n, err
}

// stop clears the line for good; nothing is drawn after it.
func (p *progress) stop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.timer != nil {
		p.timer.Stop()
	}
	p.clear()
	p.stopped = true
}

// draw (p.mu held) rewrites the line, when it may be shown.
func (p *progress) draw() {
	if !p.ready || p.partial || p.stopped {
		return
	}
	fmt.Fprintf(p.w, "\r\033[K%s", fit(progressLine(p.done, p.total, p.running), p.columns()))
	p.shown = true
}

// clear (p.mu held) removes the line from the screen.
func (p *progress) clear() {
	if p.shown {
		fmt.Fprint(p.w, "\r\033[K")
		p.shown = false
	}
}

// progressLine says how far a run is: "3/21 done, replaying a, b".
func progressLine(done, total int, running []string) string {
	s := fmt.Sprintf("dsh-replay: %d/%d done", done, total)
	if len(running) > 0 {
		s += ", replaying " + strings.Join(running, ", ")
	}
	return s
}

// fit cuts line to fewer runes than a terminal of columns has, so that it
// never wraps (a wrapped line cannot be rewritten in place); columns <= 0 is
// a width not known, taken as 80.
func fit(line string, columns int) string {
	if columns <= 0 {
		columns = 80
	}
	limit := columns - 1
	if utf8.RuneCountInString(line) <= limit {
		return line
	}
	if limit < 1 {
		return ""
	}
	r := []rune(line)
	return string(r[:limit-1]) + "…"
}

// terminal returns w's terminal width function when w is a terminal.
func terminal(w io.Writer) (columns func() int, ok bool) {
	f, ok := w.(*os.File)
	if !ok {
		return nil, false
	}
	fd := int(f.Fd())
	if _, err := unix.IoctlGetTermios(fd, unix.TCGETS); err != nil {
		return nil, false
	}
	return func() int {
		ws, err := unix.IoctlGetWinsize(fd, unix.TIOCGWINSZ)
		if err != nil {
			return 0
		}
		return int(ws.Col)
	}, true
}
