package recording

import (
	"bufio"
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/dshsim/dshsim/internal/waittest"
)

// withKids is a recording with a child log and the child's sidecars.
const withKids = transcripts + "/subagent-report"

// copyRecording copies the recording at src into a fresh directory and
// returns it.
func copyRecording(t *testing.T, src string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), filepath.Base(src))
	if err := CopyTree(src, dir); err != nil {
		t.Fatal(err)
	}
	return dir
}

// editLines copies the recording withKids, lets edit change the lines of
// its file (each with its newline) and writes them back; it returns the
// copy.
func editLines(t *testing.T, file string, edit func(lines [][]byte)) string {
	t.Helper()
	dir := copyRecording(t, withKids)
	path := filepath.Join(dir, file)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.SplitAfter(data, []byte("\n"))
	edit(lines)
	if err := os.WriteFile(path, bytes.Join(lines, nil), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// filesSize is the size of a recording's files (its directory's regular
// files, workspace/ aside).
func filesSize(t *testing.T, dir string) int64 {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, e := range entries {
		if fi, err := e.Info(); err == nil && fi.Mode().IsRegular() {
			n += fi.Size()
		}
	}
	return n
}

// loadError loads dir within b and returns its *Error (nil when it loads).
func loadError(t *testing.T, dir string, b Bounds) *Error {
	t.Helper()
	r, err := LoadBounded(dir, b)
	if err == nil {
		return nil
	}
	var e *Error
	if !errors.As(err, &e) || r != nil {
		t.Fatalf("LoadBounded: %v (%T), want a *recording.Error and no recording", err, err)
	}
	return e
}

// TestARecordingPastItsBoundIsRefusedBeforeParsing: a recording whose
// files reach exactly the bound loads; one byte more is refused naming the
// largest file, the total, the bound and the flag that raises it, before
// any file is parsed (the extra byte makes session.jsonl invalid JSON,
// which is not what the error says).
func TestARecordingPastItsBoundIsRefusedBeforeParsing(t *testing.T) {
	dir := copyRecording(t, withKids)
	size := filesSize(t, dir)
	if e := loadError(t, dir, Bounds{MaxBytes: size}); e != nil {
		t.Fatalf("files of exactly the bound, %d bytes: %v", size, e)
	}
	f, err := os.OpenFile(filepath.Join(dir, SessionFile), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("{")
	f.Close()
	e := loadError(t, dir, Bounds{MaxBytes: size})
	want := "the largest of the recording's files, which come to " + strconv.FormatInt(size+1, 10) +
		" bytes: more than the bound of a recording, " + strconv.FormatInt(size, 10) + " bytes (dsh-replay -recording-max-bytes); refused before any is parsed"
	if e == nil || e.File != ChildSidecar(ToolSchemasFile, 1) || e.Line != 0 || !strings.Contains(e.Problem, want) {
		t.Fatalf("one byte past the bound: %v, want the largest file, %s, and %q", e, ChildSidecar(ToolSchemasFile, 1), want)
	}
	if e := loadError(t, dir, Bounds{MaxBytes: size + 1}); e == nil || !strings.Contains(e.Problem, "truncated") {
		t.Fatalf("within a bound one byte larger: %v, want the parse error of the extra byte", e)
	}
}

// TestTheDefaultBoundRefusesALargeLog: under the default bound, a
// session.jsonl of one byte more than the bound is refused by its size.
func TestTheDefaultBoundRefusesALargeLog(t *testing.T) {
	dir := copyRecording(t, withKids)
	if err := os.Truncate(filepath.Join(dir, SessionFile), DefaultRecordingMaxBytes+1); err != nil {
		t.Fatal(err)
	}
	e := loadError(t, dir, Bounds{})
	if e == nil || e.File != SessionFile || !strings.HasPrefix(e.Problem, strconv.Itoa(DefaultRecordingMaxBytes+1)+" bytes, the largest") ||
		!strings.Contains(e.Problem, "more than the bound of a recording, "+strconv.Itoa(DefaultRecordingMaxBytes)+" bytes") {
		t.Fatalf("%v", e)
	}
}

// TestALinePastItsBoundIsRefused: in each JSONL file of a recording, a
// line of exactly the bound of one line loads, and with the bound one byte
// lower the load fails naming that file and line.
func TestALinePastItsBoundIsRefused(t *testing.T) {
	for _, file := range []string{SessionFile, ChildFile(1), StdoutFile} {
		t.Run(file, func(t *testing.T) {
			var n int64
			dir := editLines(t, file, func(lines [][]byte) {
				// Line 2 grows a field no reader reads, past every other
				// line of the recording.
				lines[1] = append([]byte(`{"padding":"`+strings.Repeat("p", 200<<10)+`",`), lines[1][1:]...)
				n = int64(len(bytes.TrimSuffix(lines[1], []byte("\n"))))
			})
			if e := loadError(t, dir, Bounds{MaxLineBytes: n}); e != nil {
				t.Fatalf("a line of exactly the bound, %d bytes: %v", n, e)
			}
			e := loadError(t, dir, Bounds{MaxLineBytes: n - 1})
			if e == nil || e.File != file || e.Line != 2 || !strings.Contains(e.Problem, "a line of more than "+strconv.FormatInt(n-1, 10)+" bytes, the bound of one line (a quarter of dsh-replay -recording-max-bytes)") {
				t.Fatalf("a line one byte past the bound: %v, want %s:2 naming the bound %d", e, file, n-1)
			}
		})
	}
}

// TestInvalidUTF8IsRefusedNamingFileAndLine: a byte that is not UTF-8,
// planted inside a JSON string on line n of each file a recording's
// readers read (where the JSON decoder would read it as U+FFFD and go on),
// is refused naming the file and line n.
func TestInvalidUTF8IsRefusedNamingFileAndLine(t *testing.T) {
	for _, file := range []string{SessionFile, ChildFile(1), StdoutFile, InputFile, SettingsFile,
		ChildSidecar(ToolSchemasFile, 1), ChildSidecar(SystemPromptFile, 1), ProjectionFile} {
		t.Run(file, func(t *testing.T) {
			var n int
			dir := editLines(t, file, func(lines [][]byte) { n = plantInvalid(t, lines, 3) })
			rec, err := Load(dir)
			if file == ProjectionFile && err == nil {
				_, err = rec.ReadFile(file) // the replay reads it itself
			}
			var e *Error
			if !errors.As(err, &e) || e.File != file || e.Line != n || !strings.HasPrefix(e.Problem, "not valid UTF-8: byte 0xff at column ") {
				t.Fatalf("got %v, want %s:%d: not valid UTF-8 ...", err, file, n)
			}
		})
	}
}

// plantInvalid puts the byte 0xff inside a string (after `": "` or `":"`,
// or anywhere on a text line) on the first line at or after line from
// (1-based) that has one, and returns that line's number.
func plantInvalid(t *testing.T, lines [][]byte, from int) int {
	t.Helper()
	for i := from - 1; i < len(lines); i++ {
		for _, sep := range []string{`":"`, `": "`} {
			if at := bytes.Index(lines[i], []byte(sep)); at >= 0 {
				at += len(sep)
				lines[i] = append(lines[i][:at:at], append([]byte{0xff}, lines[i][at:]...)...)
				return i + 1
			}
		}
		if !bytes.ContainsAny(lines[i], `{}[]"`) && len(bytes.TrimSpace(lines[i])) > 0 {
			lines[i] = append([]byte{0xff}, lines[i]...)
			return i + 1
		}
	}
	t.Fatal("no line to plant a byte in")
	return 0
}

// TestAFIFOIsNotRead: a recording whose session.jsonl is a FIFO is
// refused naming it, without blocking on it (a reader that opened it
// plainly would wait for a writer forever).
func TestAFIFOIsNotRead(t *testing.T) {
	dir := copyRecording(t, withKids)
	path := filepath.Join(dir, SessionFile)
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Fatal(err)
	}
	err := waittest.Call(t, "loading a recording whose session.jsonl is a FIFO", func() error {
		_, err := LoadBounded(dir, Bounds{})
		return err
	})
	var e *Error
	if !errors.As(err, &e) || e.File != SessionFile || e.Problem != "not a regular file but a FIFO" {
		t.Fatalf("%v", err)
	}
}

// TestAFileLongerThanItsSizeIsCutAtTheBound: a JSON file that reads longer
// than its size said (one that grew after it was measured; here a link to
// a kernel file whose size reads 0) is read no further than one byte past
// what is left of the bound, and refused naming it: read whole, it would
// be read to its end however long.
func TestAFileLongerThanItsSizeIsCutAtTheBound(t *testing.T) {
	const proc = "/proc/kallsyms" // megabytes (every kernel symbol)
	if fi, err := os.Stat(proc); err != nil || fi.Size() != 0 || !fi.Mode().IsRegular() {
		t.Skipf("needs %s, a regular file whose size reads 0 (%v)", proc, err)
	}
	for _, file := range []string{InputFile, ChildSidecar(ToolSchemasFile, 1)} {
		t.Run(file, func(t *testing.T) {
			dir := copyRecording(t, withKids)
			path := filepath.Join(dir, file)
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(proc, path); err != nil {
				t.Fatal(err)
			}
			size := filesSize(t, dir)
			bound := size + 1<<20
			e := loadError(t, dir, Bounds{MaxBytes: bound})
			if e == nil || e.File != file || e.Problem != "grew past the bound of a recording, "+strconv.FormatInt(bound, 10)+" bytes, while it was read (dsh-replay -recording-max-bytes)" {
				t.Fatalf("%v", e)
			}
		})
	}
}

// endless is an endless JSONL stream: line(i) is its line i (0-based).
// Read far past stop bytes, it fails, so that a reader that does not stop
// at its bound fails the test instead of filling the memory.
type endless struct {
	line func(i int) string
	buf  []byte
	i    int
	read int
	stop int
}

func (e *endless) Read(p []byte) (int, error) {
	if e.read += len(p); e.read > 16*e.stop {
		return 0, errors.New("read 16 times past the bound")
	}
	for len(e.buf) < len(p) {
		e.buf = append(e.buf, e.line(e.i)+"\n"...)
		e.i++
	}
	n := copy(p, e.buf)
	e.buf = e.buf[n:]
	return n, nil
}

// TestAStreamLongerThanTheBoundIsCut: a JSONL file of valid lines that
// never ends (one that grows while it is read) is read line by line no
// further than the bound of the recording: the error names the file and
// the line where the bound passed. Read whole, it would never end.
func TestAStreamLongerThanTheBoundIsCut(t *testing.T) {
	const bound = 64 << 10
	for _, tc := range []struct {
		file  string
		line  func(i int) string
		parse func(lr *lineReader) error
	}{
		{StdoutFile, func(int) string { return `{"jsonrpc":"2.0","method":"m"}` }, func(lr *lineReader) error { _, err := parseStdout("r", lr); return err }},
		{SessionFile, func(i int) string {
			if i == 0 {
				return `{"type":"session"}`
			}
			return `{"type":"session/title","seq":` + strconv.Itoa(i-1) + `,"data":{}}`
		}, func(lr *lineReader) error { _, _, err := parseSession("r", lr); return err }},
	} {
		t.Run(tc.file, func(t *testing.T) {
			// the line the bound passes on
			n, at := 0, 0
			for at <= bound {
				at += len(tc.line(n)) + 1
				n++
			}
			l := &loader{name: "r", bounds: Bounds{MaxBytes: bound}.WithDefaults()}
			l.left = l.bounds.MaxBytes
			r, done := l.budget(&endless{line: tc.line, stop: bound})
			err := tc.parse(&lineReader{r: bufio.NewReader(r), rec: "r", file: tc.file, max: l.bounds.MaxLineBytes})
			done()
			var e *Error
			if !errors.As(err, &e) || e.File != tc.file || e.Line != n || !strings.HasPrefix(e.Problem, "grew past the bound of a recording") || l.left != 0 {
				t.Fatalf("%v (left %d), want %s:%d: grew past the bound", err, l.left, tc.file, n)
			}
		})
	}
}

// TestAMissingDirectoryIsAMissingRecording: where there is no directory,
// sizing the recording fails as reading it would: input.json is missing
// (callers skip recordings that are not there by that error).
func TestAMissingDirectoryIsAMissingRecording(t *testing.T) {
	e := loadError(t, filepath.Join(t.TempDir(), "gone"), Bounds{})
	if e == nil || e.Recording != "gone" || e.File != InputFile || !strings.HasPrefix(e.Problem, "missing file") {
		t.Fatalf("%v", e)
	}
}

// TestALineIsBoundByAQuarterOfTheRecording: a line's bound, unless given,
// is a quarter of the recording's (8 MiB by default), so the one flag that
// raises the recording's raises it too.
func TestALineIsBoundByAQuarterOfTheRecording(t *testing.T) {
	for _, tc := range []struct{ in, want Bounds }{
		{Bounds{}, Bounds{MaxBytes: 32 << 20, MaxLineBytes: 8 << 20}},
		{Bounds{MaxBytes: 1 << 30}, Bounds{MaxBytes: 1 << 30, MaxLineBytes: 256 << 20}},
		{Bounds{MaxBytes: 100, MaxLineBytes: 7}, Bounds{MaxBytes: 100, MaxLineBytes: 7}},
		{Bounds{MaxLineBytes: 7}, Bounds{MaxBytes: 32 << 20, MaxLineBytes: 7}},
	} {
		if got := tc.in.WithDefaults(); got != tc.want {
			t.Errorf("%+v.WithDefaults() = %+v, want %+v", tc.in, got, tc.want)
		}
	}
}
