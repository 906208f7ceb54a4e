package noderuntime

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
	"unicode/utf16"
)

func units(s string) []uint16 { return utf16.Encode([]rune(s)) }

func TestLedgerBoundary(t *testing.T) {
	l := newLedger(7)
	if !l.add(units("€")) || l.used != 7 {
		t.Errorf("€ at cap 7: used %d", l.used)
	}
	if l.add(units("")) {
		t.Error("an empty entry adds a separator and two quotes: over the cap")
	}
	l = newLedger(11)
	l.add(units("a"))
	if !l.fits(6) || l.fits(7) {
		t.Error("logs [a] (5 bytes) + 6 fits 11 exactly, + 7 does not")
	}
}

func TestOverflowCuts(t *testing.T) {
	cases := []struct {
		logs []string
		max  int64
		kept []string
		msg  string
	}{
		{[]string{"abc"}, 4, []string{}, ""},
		{[]string{"abc"}, 10, []string{}, "outer "},
		{[]string{"aaaa", "bbbb"}, 2 + 32 + 6 + 5, []string{"aaaa", "bb"}, "outer output exceeded 45 bytes"},
		{[]string{"😀😀"}, 2 + 32 + 2 + 5, []string{"😀"}, "outer output exceeded 41 bytes"},
		{[]string{"😀😀"}, 2 + 32 + 2 + 7, []string{"😀"}, "outer output exceeded 43 bytes"},
		{[]string{"\n\n"}, 2 + 32 + 2 + 3, []string{"\n"}, "outer output exceeded 39 bytes"},
	}
	for _, c := range cases {
		var in [][]uint16
		for _, s := range c.logs {
			in = append(in, units(s))
		}
		kept, msg := overflow(in, c.max)
		if !reflect.DeepEqual(kept, c.kept) || msg != c.msg {
			t.Errorf("overflow(%q, %d) = %q %q, want %q %q", c.logs, c.max, kept, msg, c.kept, c.msg)
		}
	}
}

func TestReadMessage(t *testing.T) {
	f := func(body string) []byte { return frame([]byte(body)) }
	cases := []struct {
		in  []byte
		typ string
		err string
		max int
	}{
		{f(`{"type":"log","text":"x"}`), "log", "", 100},
		{f(`{"type":"log","text":"x"}`), "", "control frame exceeds 10 bytes or is empty", 10},
		{[]byte{0, 0, 0, 0}, "", "control frame exceeds 100 bytes or is empty", 100},
		{f(`[1]`), "", "invalid control frame", 100},
		{f(`{"type":1}`), "", "invalid control frame", 100},
		{f(`{"type":"log"`), "", "invalid control frame", 100},
		{f("{\"type\":\"\xff\"}"), "", "invalid control frame", 100},
		{[]byte{0, 0, 1}, "", "invalid control frame: truncated length", 100},
		{append([]byte{0, 0, 0, 9}, '{'), "", "invalid control frame: truncated body", 100},
	}
	for _, c := range cases {
		m, err := readMessage(bytes.NewReader(c.in), c.max)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != c.err || m.typ != c.typ {
			t.Errorf("readMessage(%q) = %q, %q; want %q, %q", c.in, m.typ, got, c.typ, c.err)
		}
	}
	if _, err := readMessage(strings.NewReader(""), 10); err == nil || err.Error() != "EOF" {
		t.Errorf("clean end: %v", err)
	}
}
