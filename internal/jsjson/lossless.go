package jsjson

import "math"

// Lossless reports whether v survives a JSON round trip unchanged, as
// upstream's walkJsonValue judges a parsed value: every number finite and
// none of them -0 (a literal that overflows parses to ±Infinity, and "-0",
// "-0.0" or "-1e-400" parse to -0; JSON.stringify writes both otherwise).
// It walks with an explicit stack, so nesting depth costs no Go stack.
func Lossless(v *Value) bool {
	stack := []*Value{v}
	for len(stack) > 0 {
		cur := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		switch cur.Kind {
		case Number:
			if math.IsInf(cur.Num, 0) || math.IsNaN(cur.Num) || (cur.Num == 0 && math.Signbit(cur.Num)) {
				return false
			}
		case Array:
			stack = append(stack, cur.Elems...)
		case Object:
			for _, m := range cur.Members {
				stack = append(stack, m.Value)
			}
		}
	}
	return true
}
