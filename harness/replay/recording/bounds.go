package recording

import (
	"bufio"
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"unicode/utf8"
)

// Bounds bound what [LoadBounded] reads of a recording. A zero field takes
// its default; the defaults are far above any real recording (upstream's
// largest are a few hundred KiB, their longest line about 100 KiB) and far
// below what would strain a host.
type Bounds struct {
	// MaxBytes bounds the recording's files together: every file of its
	// directory, whether the replay reads it or not, its workspace/ seed
	// aside (the seed has its own bounds, [SeedBounds]).
	MaxBytes int64 `json:",omitempty"`
	// MaxLineBytes bounds one line (without its newline) of a JSONL file:
	// the session logs and stdout.expected.jsonl (0: a quarter of
	// MaxBytes).
	MaxLineBytes int64 `json:",omitempty"`
}

// DefaultRecordingMaxBytes is the default of Bounds.MaxBytes; a line's
// default is a quarter of it, 8 MiB.
const DefaultRecordingMaxBytes = 32 << 20

// WithDefaults fills the zero fields of b with the defaults.
func (b Bounds) WithDefaults() Bounds {
	b.MaxBytes = cmp.Or(b.MaxBytes, DefaultRecordingMaxBytes)
	b.MaxLineBytes = cmp.Or(b.MaxLineBytes, b.MaxBytes/4)
	return b
}

// measure sizes the recording's files (its directory's regular files,
// links followed; directories aside) before anything is parsed: past the
// bound of the whole, the error names the largest file.
func (l *loader) measure() error {
	entries, err := os.ReadDir(l.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return l.missing(InputFile) // no recording there at all
	}
	if err != nil {
		return &Error{Recording: l.name, Problem: err.Error()}
	}
	var total, largest int64
	var name string
	for _, e := range entries {
		fi, err := os.Stat(filepath.Join(l.dir, e.Name()))
		if err != nil || !fi.Mode().IsRegular() {
			continue // a file the replay reads is refused when opened
		}
		total += fi.Size()
		if fi.Size() > largest || name == "" {
			largest, name = fi.Size(), e.Name()
		}
	}
	if total > l.bounds.MaxBytes {
		return l.fail(name, 0, "", "%d bytes, the largest of the recording's files, which come to %d bytes: more than the bound of a recording, %d bytes (dsh-replay -recording-max-bytes); refused before any is parsed", largest, total, l.bounds.MaxBytes)
	}
	l.left = l.bounds.MaxBytes
	return nil
}

// open opens a file of the recording for reading: a regular file (a FIFO or
// a device would block or never end), opened without blocking and checked
// on the descriptor; found is false when there is no such file.
func (l *loader) open(file string) (f *os.File, found bool, err error) {
	f, err = os.OpenFile(filepath.Join(l.dir, file), os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, l.fail(file, 0, "", "%v", err)
	}
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = fmt.Errorf("not a regular file but %s", kind(fi.Mode()))
	}
	if err == nil && fi.Size() > l.left {
		err = fmt.Errorf("%d bytes, more than the %d left of the bound of a recording, %d bytes (dsh-replay -recording-max-bytes)", fi.Size(), l.left, l.bounds.MaxBytes)
	}
	if err != nil {
		f.Close()
		return nil, false, l.fail(file, 0, "", "%v", err)
	}
	return f, true, nil
}

// kind names a file type that is not a regular file.
func kind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "a special file (" + m.Type().String() + ")"
}

// ReadFile reads file of the recording (a sidecar the replay reads itself,
// such as projection.expected.json) as [LoadBounded] reads the recording's
// JSON files: a regular file within the recording's bound, valid UTF-8. A
// missing file is an error wrapping [fs.ErrNotExist].
func (r *Recording) ReadFile(file string) ([]byte, error) {
	l := &loader{name: r.Name, dir: r.Dir, bounds: r.bounds.WithDefaults()}
	l.left = l.bounds.MaxBytes
	data, found, err := l.readOptional(file)
	if err == nil && !found {
		return nil, fmt.Errorf("%s: %w", filepath.Join(r.Name, file), fs.ErrNotExist)
	}
	return data, err
}

// budget wraps f so that reading it past what is left of the bound fails
// (a file that grew after it was measured, one whose size lies), and takes
// what was read from what is left when done is called.
func (l *loader) budget(f io.Reader) (r io.Reader, done func()) {
	b := &budgetReader{r: f, n: l.left, bound: l.bounds.MaxBytes}
	return b, func() { l.left = b.n }
}

// budgetReader reads r up to n bytes; a byte more is an error.
type budgetReader struct {
	r     io.Reader
	n     int64
	bound int64
}

func (b *budgetReader) Read(p []byte) (int, error) {
	if b.n <= 0 {
		var one [1]byte
		if n, err := b.r.Read(one[:]); n == 0 {
			return 0, err
		}
		return 0, fmt.Errorf("grew past the bound of a recording, %d bytes, while it was read (dsh-replay -recording-max-bytes)", b.bound)
	}
	if int64(len(p)) > b.n {
		p = p[:b.n]
	}
	n, err := b.r.Read(p)
	b.n -= int64(n)
	return n, err
}

// readOptional reads a whole file a recording may have (found false when it
// has not), within the bound, and checks that it is valid UTF-8.
func (l *loader) readOptional(file string) (data []byte, found bool, err error) {
	f, found, err := l.open(file)
	if !found || err != nil {
		return nil, false, err
	}
	defer f.Close()
	r, done := l.budget(f)
	data, err = io.ReadAll(r)
	done()
	if err != nil {
		return nil, false, l.fail(file, 0, "", "%v", err)
	}
	if err := checkUTF8(l.name, file, data, 0); err != nil {
		return nil, false, err
	}
	return data, true, nil
}

// lines streams a JSONL file a recording must have, line by line (see
// [lineReader]); close closes it and takes what was read from the bound.
func (l *loader) lines(file string) (lr *lineReader, close func(), err error) {
	f, found, err := l.open(file)
	if err != nil {
		return nil, nil, err
	}
	if !found {
		return nil, nil, l.missing(file)
	}
	r, done := l.budget(f)
	lr = &lineReader{r: bufio.NewReaderSize(r, 64<<10), rec: l.name, file: file, max: l.bounds.MaxLineBytes}
	return lr, func() {
		done()
		f.Close()
	}, nil
}

// lineReader yields the lines of a JSONL file as [splitLines] splits them
// (a last empty line dropped), each at most max bytes without its newline
// and valid UTF-8: a longer line is refused once max+1 bytes of it are read,
// so one line never holds more than max bytes in memory.
type lineReader struct {
	r         *bufio.Reader
	rec, file string
	max       int64
	// n is the 1-based number of the line next returned; eol reports
	// whether it ended with a newline.
	n   int
	eol bool
}

// next returns the next line (io.EOF after the last) or an [*Error] naming
// the file and line.
func (lr *lineReader) next() ([]byte, error) {
	var line []byte
	for {
		chunk, err := lr.r.ReadSlice('\n')
		if len(line) == 0 && len(chunk) == 0 && errors.Is(err, io.EOF) {
			return nil, io.EOF
		}
		line = append(line, chunk...)
		body := int64(len(line))
		if err == nil {
			body-- // the newline
		}
		if body > lr.max {
			return nil, &Error{Recording: lr.rec, File: lr.file, Line: lr.n + 1,
				Problem: fmt.Sprintf("a line of more than %d bytes, the bound of one line (a quarter of dsh-replay -recording-max-bytes)", lr.max)}
		}
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case err != nil && !errors.Is(err, io.EOF):
			return nil, &Error{Recording: lr.rec, File: lr.file, Line: lr.n + 1, Problem: err.Error()}
		}
		lr.n++
		lr.eol = err == nil
		if lr.eol {
			line = line[:len(line)-1]
		}
		if err := checkUTF8(lr.rec, lr.file, line, lr.n); err != nil {
			return nil, err
		}
		return line, nil
	}
}

// checkUTF8 refuses data that is not valid UTF-8, naming the line of its
// first invalid byte (line: the line data is, 0 when it is a whole file)
// and the byte's column. Upstream writes its logs and sidecars with
// JSON.stringify, which never produces such bytes; decoded, they would read
// as U+FFFD and could compare equal to text that differs.
func checkUTF8(rec, file string, data []byte, line int) error {
	if utf8.Valid(data) {
		return nil
	}
	at := 0
	for at < len(data) {
		r, size := utf8.DecodeRune(data[at:])
		if r == utf8.RuneError && size <= 1 {
			break
		}
		at += size
	}
	start := 0
	if line == 0 {
		line = lineAt(data, int64(at))
		if i := lastNewline(data[:at]); i >= 0 {
			start = i + 1
		}
	}
	return &Error{Recording: rec, File: file, Line: line,
		Problem: fmt.Sprintf("not valid UTF-8: byte %#02x at column %d (a log written by JSON.stringify never holds such bytes)", data[at], at-start+1)}
}

func lastNewline(b []byte) int {
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] == '\n' {
			return i
		}
	}
	return -1
}
