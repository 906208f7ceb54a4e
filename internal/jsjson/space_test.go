package jsjson

import (
	"testing"
	"unicode"
)

// TestIsSpace: JavaScript's whitespace is Unicode's White_Space (Go's
// unicode.IsSpace) with U+FEFF added and U+0085 taken out, over every rune.
func TestIsSpace(t *testing.T) {
	for r := rune(0); r <= unicode.MaxRune; r++ {
		want := r == '\uFEFF' || r != '\u0085' && unicode.IsSpace(r)
		if IsSpace(r) != want {
			t.Errorf("IsSpace(%U) = %v, want %v", r, !want, want)
		}
	}
	if got := Trim("\uFEFF\u00A0 x \u0085\u3000"); got != "x \u0085" {
		t.Errorf("Trim = %q", got)
	}
}
