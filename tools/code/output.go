package code

import (
	"strings"

	"github.com/dshsim/dshsim/tools/code/internal/jsjson"
)

// NoOutput is the VERBATIM text of a run with no logs and no result.
const NoOutput = "(run_code completed with no output)"

// compactDepth is the container depth from which a rendered result is
// compact (root = 0).
const compactDepth = 5

// Text composes the model-facing text of a successful run (code-mode.md
// §7.1): the logs joined by "\n" and the rendered result, the non-empty
// ones joined by "\n"; both empty is [NoOutput]. result is nil when the
// program returned nothing.
func Text(logs []string, result *jsjson.Value) string {
	var parts []string
	if l := strings.Join(logs, "\n"); l != "" {
		parts = append(parts, l)
	}
	if result != nil {
		if r := Render(result); r != "" {
			parts = append(parts, r)
		}
	}
	if len(parts) == 0 {
		return NoOutput
	}
	return strings.Join(parts, "\n")
}

// Render renders a returned value (§7.2): a string root raw, other scalars
// as JavaScript's String(v), containers as JSON.stringify(v, null, 2) up to
// depth 4 and compact from depth 5. It uses an explicit stack.
func Render(v *jsjson.Value) string {
	switch v.Kind {
	case jsjson.String:
		return v.Str()
	case jsjson.Array, jsjson.Object:
	default:
		return jsjson.Scalar(v)
	}
	var b strings.Builder
	type item struct {
		v     *jsjson.Value
		depth int
		lit   string
	}
	stack := []item{{v: v}}
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if it.v == nil {
			b.WriteString(it.lit)
			continue
		}
		x := it.v
		if x.Kind != jsjson.Array && x.Kind != jsjson.Object {
			b.WriteString(jsjson.Scalar(x))
			continue
		}
		if it.depth >= compactDepth {
			b.WriteString(jsjson.Compact(x))
			continue
		}
		n := len(x.Elems)
		open, end := "[", "]"
		if x.Kind == jsjson.Object {
			n, open, end = len(x.Members), "{", "}"
		}
		if n == 0 {
			b.WriteString(open + end)
			continue
		}
		inner := "\n" + strings.Repeat("  ", it.depth+1)
		b.WriteString(open)
		stack = append(stack, item{lit: "\n" + strings.Repeat("  ", it.depth) + end})
		for i := n - 1; i >= 0; i-- {
			sep := inner
			if i > 0 {
				sep = "," + inner
			}
			if x.Kind == jsjson.Array {
				stack = append(stack, item{v: x.Elems[i], depth: it.depth + 1}, item{lit: sep})
			} else {
				m := x.Members[i]
				stack = append(stack, item{v: m.Value, depth: it.depth + 1}, item{lit: sep + jsjson.QuoteUnits(m.Key) + ": "})
			}
		}
	}
	return b.String()
}
