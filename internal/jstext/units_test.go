package jstext

import "testing"

func TestUnitsAndHead(t *testing.T) {
	for _, c := range []struct {
		s     string
		units int
		n     int
		head  string
	}{
		{"", 0, 3, ""},
		{"abc", 3, 2, "ab"},
		{"abc", 3, 3, "abc"},
		{"héllo", 5, 2, "hé"},
		{"a😀b", 4, 3, "a😀"},
		{"a😀b", 4, 2, "a"}, // the pair is not split
		{"a😀b", 4, 1, "a"},
		{"€€", 2, 1, "€"},
	} {
		if got := Units(c.s); got != c.units {
			t.Errorf("Units(%q) = %d, want %d", c.s, got, c.units)
		}
		if got := Head(c.s, c.n); got != c.head {
			t.Errorf("Head(%q, %d) = %q, want %q", c.s, c.n, got, c.head)
		}
	}
}
