package spill

import (
	"os"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzApply checks the budget invariants on arbitrary text and caps: a spilled
// result fits the cap, never splits a valid UTF-8 sequence, and its file holds
// the full text; a kept result is unchanged.
func FuzzApply(f *testing.F) {
	f.Add("SPILL_START-"+strings.Repeat("x", 2000)+"-SPILL_END", uint16(800), true)
	f.Add(strings.Repeat("é😀ab\n", 500), uint16(300), false)
	f.Add("", uint16(0), false)
	root := f.TempDir()
	call := newCallTB(f, "bash", "s")
	f.Fuzz(func(t *testing.T, text string, capv uint16, bytes bool) {
		cfg := TokenConfig(int(capv))
		if bytes {
			cfg = ByteConfig(int(capv))
		}
		st, _ := NewStore(root)
		p, err := New(cfg, st, func(string) {})
		if err != nil {
			t.Fatal(err)
		}
		res := result(text)
		got, spilled := p.Apply(call, res)
		if !spilled {
			if got.Text() != text {
				t.Fatal("kept result changed")
			}
			return
		}
		out := got.Text()
		if bytes && len(out) > int(capv) || !bytes && EstimateTokens(out) > int(capv) {
			t.Fatalf("over the cap %d: %d bytes", capv, len(out))
		}
		if utf8.ValidString(text) && !utf8.ValidString(out) {
			t.Fatal("split a UTF-8 sequence")
		}
		m := noticeRe.FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("no notice: %q", out)
		}
		full, err := os.ReadFile(m[2])
		if err != nil || string(full) != text {
			t.Fatalf("spill file: %v", err)
		}
		os.Remove(m[2])
	})
}

// FuzzUnitCounter checks that counting UTF-16 units over two chunks equals
// counting the whole text, wherever the chunk boundary falls.
func FuzzUnitCounter(f *testing.F) {
	f.Add("a\xffé😀日\xe6\x97", uint8(3))
	f.Fuzz(func(t *testing.T, s string, cut uint8) {
		k := int(cut) % (len(s) + 1)
		var c unitCounter
		c.write([]byte(s[:k]))
		c.write([]byte(s[k:]))
		if c.total() != int64(UTF16Len(s)) {
			t.Fatalf("split %d: %d, want %d", k, c.total(), UTF16Len(s))
		}
	})
}
