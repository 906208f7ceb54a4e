package noderuntime

import (
	"strconv"
	"unicode/utf16"

	"github.com/dshsim/dshsim/internal/jsjson"
)

// OutputLimitMessage is the VERBATIM output-limit failure message.
func OutputLimitMessage(max int64) string {
	return "outer output exceeded " + strconv.FormatInt(max, 10) + " bytes"
}

// ledger is the combined outer-output ledger, counted as upstream's: the bytes
// of JSON.stringify(logs), starting at 2 for "[]", one separator per extra
// entry, each entry at its exact JSON string size. The completion value or
// the failure message is added on top when the run ends.
type ledger struct {
	max  int64
	used int64
	logs [][]uint16
}

func newLedger(max int64) *ledger { return &ledger{max: max, used: 2} }

// entrySize is what one more entry adds.
func (l *ledger) entrySize(u []uint16) int64 {
	n := int64(jsjson.QuotedSize(u))
	if len(l.logs) > 0 {
		n++
	}
	return n
}

// add appends an entry and reports whether the logs still fit (an entry
// that does not is kept for [overflow] to cut).
func (l *ledger) add(u []uint16) bool {
	l.used += l.entrySize(u)
	l.logs = append(l.logs, u)
	return l.used <= l.max
}

// fits reports whether a final piece of JSON size extra still fits.
func (l *ledger) fits(extra int64) bool { return l.used+extra <= l.max }

// strings returns the entries as Go strings.
func (l *ledger) strings() []string {
	out := make([]string, len(l.logs))
	for i, u := range l.logs {
		out[i] = string(utf16.Decode(u))
	}
	return out
}

// overflow is the outcome of a ledger overflow: the logs cut to the longest
// prefix that fits together with the failure message (the last kept entry
// possibly cut at a code-point boundary), and the message, itself cut when
// even it does not fit beside "[]".
func overflow(logs [][]uint16, max int64) (kept []string, message string) {
	msg := utf16.Encode([]rune(OutputLimitMessage(max)))
	room := max - 2 - int64(jsjson.QuotedSize(msg))
	if room < 0 {
		return []string{}, string(utf16.Decode(cutToFit(msg, max-2)))
	}
	kept = []string{}
	used := int64(0)
	for i, u := range logs {
		sep := int64(0)
		if i > 0 {
			sep = 1
		}
		n := int64(jsjson.QuotedSize(u)) + sep
		if used+n <= room {
			kept = append(kept, string(utf16.Decode(u)))
			used += n
			continue
		}
		if part := cutToFit(u, room-used-sep); len(part) > 0 {
			kept = append(kept, string(utf16.Decode(part)))
		}
		break
	}
	return kept, string(utf16.Decode(msg))
}

// cutToFit returns the longest prefix of u, ending at a code-point boundary,
// whose JSON string size is at most size.
func cutToFit(u []uint16, size int64) []uint16 {
	if size < 2 {
		return nil
	}
	lo, hi := 0, len(u)
	for lo < hi { // largest n with QuotedSize(u[:n]) <= size
		mid := (lo + hi + 1) / 2
		if int64(jsjson.QuotedSize(boundary(u, mid))) <= size {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return boundary(u, lo)
}

// boundary shortens u[:n] by one unit when it would split a surrogate pair.
func boundary(u []uint16, n int) []uint16 {
	if n > 0 && n < len(u) && utf16.IsSurrogate(rune(u[n-1])) && u[n-1] < 0xdc00 && u[n] >= 0xdc00 && u[n] <= 0xdfff {
		n--
	}
	return u[:n]
}
