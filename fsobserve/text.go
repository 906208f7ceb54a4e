package fsobserve

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// byteOrderMark is UTF-8's byte-order mark (U+FEFF).
const byteOrderMark = "\xef\xbb\xbf"

// DropByteOrderMark is a file's text as upstream decodes it (TextDecoder
// "utf-8", whose default drops one leading byte-order mark): read and edit
// never see that mark, and edit writes the file back without it. A second
// mark, or one later in the file, is text.
func DropByteOrderMark(data []byte) []byte {
	return bytes.TrimPrefix(data, []byte(byteOrderMark))
}

// NormalizeLF replaces every CRLF with LF; a lone CR is kept.
func NormalizeLF(s string) string { return strings.ReplaceAll(s, "\r\n", "\n") }

// DetectCRLF reports whether the text's line-ending style is CRLF: in its
// first 4096 characters, CRLF pairs outnumber bare LFs.
func DetectCRLF(s string) bool {
	crlf, lf, n := 0, 0, 0
	prevCR := false
	for _, r := range s {
		if n >= 4096 {
			break
		}
		n += utf16.RuneLen(r)
		if r == '\n' {
			if prevCR {
				crlf++
			} else {
				lf++
			}
		}
		prevCR = r == '\r'
	}
	return crlf > lf
}

// Edit is one literal replacement.
type Edit struct {
	// Old is the literal text to find (CRLF normalized to LF before matching).
	Old string
	// New is the replacement (CRLF normalized to LF).
	New string
	// ReplaceAll replaces every occurrence; otherwise Old must occur once.
	ReplaceAll bool
}

// ApplyLiteralEdit applies e to LF text; display names the file in errors.
func ApplyLiteralEdit(text string, e Edit, display string) (string, error) {
	old, repl := NormalizeLF(e.Old), NormalizeLF(e.New)
	if old == "" {
		return "", Errorf(CodeEditNotFound, "old_string must be a non-empty string")
	}
	n := strings.Count(text, old)
	switch {
	case n == 0:
		return "", Errorf(CodeEditNotFound, "old_string was not found in %q", display)
	case n > 1 && !e.ReplaceAll:
		return "", Errorf(CodeAmbiguousEdit, "old_string matched %d times in %q; provide a more specific old_string or set replace_all to true", n, display)
	}
	return strings.ReplaceAll(text, old, repl), nil
}

// checkText validates whole-file bytes as editable text.
func checkText(data []byte, op, display string) error {
	if bytes.IndexByte(data, 0) >= 0 {
		return Errorf(CodeNotText, "cannot %s %q: binary file", op, display)
	}
	if !utf8.Valid(data) {
		return Errorf(CodeNotText, "cannot %s %q: invalid UTF-8 text", op, display)
	}
	return nil
}

// incompleteTail returns the length of a truncated (but so far valid) UTF-8
// sequence at the end of b, 0 if b ends on a rune boundary.
func incompleteTail(b []byte) int {
	for k := 1; k <= 3 && k <= len(b); k++ {
		c := b[len(b)-k]
		if c < utf8.RuneSelf {
			return 0
		}
		if utf8.RuneStart(c) {
			if !utf8.FullRune(b[len(b)-k:]) {
				return k
			}
			return 0
		}
	}
	return 0
}

// appendCapped appends valid UTF-8 seg to line while the line stays within
// limit UTF-16 units; over reports that something was left out.
func appendCapped(line []byte, units int, seg []byte, limit int) ([]byte, int, bool) {
	if units+len(seg) <= limit && isASCII(seg) {
		return append(line, seg...), units + len(seg), false
	}
	for i := 0; i < len(seg); {
		r, size := utf8.DecodeRune(seg[i:])
		u := utf16.RuneLen(r)
		if units+u > limit {
			return line, units, true
		}
		line = append(line, seg[i:i+size]...)
		units += u
		i += size
	}
	return line, units, false
}

func isASCII(b []byte) bool {
	for _, c := range b {
		if c >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// BinarySniffBytes is how far a read looks for a NUL byte.
const BinarySniffBytes = 8192

// Line is one scanned line.
type Line struct {
	// Text holds at most the scanner's cap of UTF-16 units (one trailing CR
	// stripped when the line was not over the cap).
	Text string
	// Over is true when the line had more units than the cap.
	Over bool
}

// ScanLines streams r as UTF-8 text and calls fn for every line with bounded
// memory: a line keeps at most maxUnits+1 UTF-16 units (beyond that Over is
// set). It splits on LF, strips one trailing CR, counts a final unterminated
// segment only when non-empty, drops one leading byte-order mark (as
// [DropByteOrderMark]), refuses a NUL in the first 8192 bytes
// (FS_NOT_TEXT "binary file") and invalid UTF-8 anywhere (FS_NOT_TEXT
// "invalid UTF-8 text"). Errors are reported after lines may have been
// delivered: callers keep their result only when ScanLines returns nil.
func ScanLines(ctx context.Context, r io.Reader, display string, maxUnits int, fn func(Line)) error {
	buf := make([]byte, 64*1024)
	var carry []byte // incomplete UTF-8 sequence at a chunk end
	var line []byte
	units, over, offset := 0, false, 0
	br := bufio.NewReaderSize(r, len(buf))
	if mark, _ := br.Peek(len(byteOrderMark)); string(mark) == byteOrderMark {
		br.Discard(len(byteOrderMark))
		offset = len(byteOrderMark) // the sniff counts the file's bytes
	}
	r = br
	pending := false // a non-empty unterminated segment is open
	emit := func() {
		text := line
		if !over && len(text) > 0 && text[len(text)-1] == '\r' {
			text = text[:len(text)-1]
		}
		fn(Line{Text: string(text), Over: over})
		line, units, over, pending = line[:0], 0, false, false
	}
	for {
		if err := ctx.Err(); err != nil {
			return ErrAborted(err)
		}
		n, rerr := r.Read(buf)
		chunk := buf[:n]
		if offset < BinarySniffBytes && n > 0 {
			end := min(n, BinarySniffBytes-offset)
			if bytes.IndexByte(chunk[:end], 0) >= 0 {
				return Errorf(CodeNotText, "cannot read %q: binary file", display)
			}
		}
		offset += n
		data := chunk
		if len(carry) > 0 {
			data = append(carry, chunk...)
			carry = nil
		}
		for i := 0; i < len(data); {
			seg := data[i:]
			nl := bytes.IndexByte(seg, '\n')
			if nl >= 0 {
				seg = seg[:nl]
			} else if rerr == nil {
				// Keep an incomplete UTF-8 sequence at the chunk end for the next read.
				if cut := incompleteTail(seg); cut > 0 {
					carry = append([]byte(nil), seg[len(seg)-cut:]...)
					seg = seg[:len(seg)-cut]
				}
			}
			if !utf8.Valid(seg) {
				return Errorf(CodeNotText, "cannot read %q: invalid UTF-8 text", display)
			}
			if len(seg) > 0 {
				pending = true
				if !over {
					line, units, over = appendCapped(line, units, seg, maxUnits+1)
				}
			}
			if nl < 0 {
				break
			}
			emit()
			i += nl + 1
		}
		if rerr == io.EOF {
			if len(carry) > 0 {
				return Errorf(CodeNotText, "cannot read %q: invalid UTF-8 text", display)
			}
			if pending {
				emit()
			}
			return nil
		}
		if rerr != nil {
			return ioError("read", display, rerr)
		}
	}
}
