package jstext

// Units is s's length as JavaScript counts it: UTF-16 code units (a rune
// above U+FFFF counts two).
func Units(s string) int {
	n := 0
	for _, r := range s {
		n++
		if r > 0xFFFF {
			n++
		}
	}
	return n
}

// Head is s's first n UTF-16 code units, as JavaScript's s.slice(0, n),
// except that a surrogate pair the cut would split is left out whole (Go
// text cannot hold the lone high surrogate JavaScript keeps).
func Head(s string, n int) string {
	units := 0
	for i, r := range s {
		w := 1
		if r > 0xFFFF {
			w = 2
		}
		if units+w > n {
			return s[:i]
		}
		units += w
	}
	return s
}
