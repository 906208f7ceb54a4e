package served

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/dshsim/dshsim/internal/jsjson"
	"github.com/dshsim/dshsim/pipeline"
)

// Render is a tool's own rendering of its canonical value into the content
// the model and the session log see (upstream's output.render); it refuses
// a value the tool's output schema refuses.
type Render func(value json.RawMessage) ([]pipeline.Block, error)

// ErrNoValue is NestedValue's answer when the recording does not pin the
// value.
var ErrNoValue = errors.New("no value in the recording renders to the nested call's content")

// NestedValue finds the canonical value a nested call (a run_code
// program's) received, which upstream logs only rendered (the
// tool/code-dispatch content): of the candidates, the content's own text
// when it is one JSON value, and every object and array of the outer
// run_code call's recorded result text when that text is one JSON value
// (a program that returned what it received), it returns the one that the
// tool's own render turns into exactly the recorded content. Candidates
// equal byte for byte count once; none or several is an error, so a value
// is served only when the recording pins it.
func NestedValue(render Render, content []pipeline.Block, outer string) (json.RawMessage, error) {
	if render == nil {
		return nil, errors.New("the tool declares no rendering to identify its value by")
	}
	var found []string
	seen := map[string]bool{}
	for _, c := range candidates(text(content), outer) {
		if seen[c] {
			continue
		}
		seen[c] = true
		got, err := render(json.RawMessage(c))
		if err == nil && slices.EqualFunc(got, content, sameBlock) {
			found = append(found, c)
		}
	}
	switch len(found) {
	case 0:
		return nil, ErrNoValue
	case 1:
		return json.RawMessage(found[0]), nil
	}
	return nil, fmt.Errorf("%d different values in the recording render to the nested call's content", len(found))
}

// candidates are the content's own JSON value, then every object and array
// of the outer result's JSON value in pre-order, each as compact JSON with
// its key order kept.
func candidates(content, outer string) []string {
	var out []string
	if v, err := jsjson.Parse([]byte(content)); err == nil {
		out = append(out, jsjson.Stringify(v))
	}
	root, err := jsjson.Parse([]byte(outer))
	if err != nil {
		return out
	}
	stack := []*jsjson.Value{root}
	for len(stack) > 0 {
		v := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		var kids []*jsjson.Value
		switch v.Kind {
		case jsjson.Object:
			for _, m := range v.Members {
				kids = append(kids, m.Value)
			}
		case jsjson.Array:
			kids = v.Elems
		default:
			continue
		}
		out = append(out, jsjson.Stringify(v))
		for i := len(kids) - 1; i >= 0; i-- {
			stack = append(stack, kids[i])
		}
	}
	return out
}

func sameBlock(a, b pipeline.Block) bool {
	return a.Type == b.Type && a.Text == b.Text && bytes.Equal(a.Attachment, b.Attachment)
}
