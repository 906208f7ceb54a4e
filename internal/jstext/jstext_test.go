package jstext

import "testing"

// TestDecode: one U+FFFD per maximal subpart, as the WHATWG decoder (and
// the Unicode Standard's recommended practice, whose examples these are).
func TestDecode(t *testing.T) {
	const r = "\uFFFD"
	for _, tc := range []struct{ in, want string }{
		{"plain €😀", "plain €😀"},
		{"caf\xe9\n", "caf" + r + "\n"},
		{"\xf0\x9f", r},                                             // a truncated 4-byte sequence: one subpart
		{"\xf0\x9f\x98", r},                                         // three bytes of four
		{"a\xf0\x9fb", "a" + r + "b"},                               // cut short by an ASCII byte
		{"\xff\xff", r + r},                                         // two bytes that lead nothing: one each
		{"\x80\x80", r + r},                                         // lone continuation bytes
		{"\xc0\xaf", r + r},                                         // an overlong lead is not a lead
		{"\xe0\x80\xaf", r + r + r},                                 // E0 needs A0..BF next
		{"\xed\xa0\x80", r + r + r},                                 // a surrogate: ED needs 80..9F next
		{"\xf4\x90\x80\x80", r + r + r + r},                         // past U+10FFFF
		{"\xf5\x80", r + r},                                         // F5 leads nothing
		{"\xe2\x82\xe2\x82\xac", r + "€"},                           // a cut 3-byte sequence, then a whole one
		{"\x61\xf1\x80\x80\xe1\x80\xc2\x62", "a" + r + r + r + "b"}, // the Unicode Standard's example
	} {
		if got := Decode([]byte(tc.in)); got != tc.want {
			t.Errorf("Decode(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
