package code

import (
	"strings"

	"github.com/dshsim/dshsim/internal/jsjson"
)

// NoOutput is the VERBATIM text of a run with no logs and no result.
const NoOutput = "(run_code completed with no output)"

// compactDepth is the container depth from which a rendered result is
// compact (root = 0).
const compactDepth = 5

// Text composes the model-facing text of a successful run, as upstream's:
// the logs joined by "\n" and the rendered result, the non-empty
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

// Render renders a returned value as upstream does: a string root raw, other scalars
// as JavaScript's String(v), containers as JSON.stringify(v, null, 2) down to
// depth 4 and compact from depth 5.
func Render(v *jsjson.Value) string {
	if v.Kind == jsjson.String {
		return v.Str()
	}
	return jsjson.StringifyDepth(v, "  ", compactDepth)
}
