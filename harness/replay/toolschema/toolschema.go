package toolschema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/dshsim/dshsim/harness/replay/projection"
)

// Schema is one tool as our stack presents it to the model.
type Schema struct {
	// Name and Description are the tool's name and description.
	Name, Description string
	// Parameters is the JSON schema of its arguments, keys in the order the
	// model sees them.
	Parameters json.RawMessage
}

// JSON renders the schema as upstream's header stores a tool:
// {"name","description","parameters"} in that order.
func (s Schema) JSON() []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	b.WriteString(`{"name":`)
	_ = enc.Encode(s.Name)
	b.Truncate(b.Len() - 1)
	b.WriteString(`,"description":`)
	_ = enc.Encode(s.Description)
	b.Truncate(b.Len() - 1)
	b.WriteString(`,"parameters":`)
	b.Write(s.Parameters)
	b.WriteString(`}`)
	return b.Bytes()
}

// Expected is one tool of the sidecar.
type Expected struct {
	// Name is the tool name; Raw its JSON object as stored.
	Name string
	Raw  json.RawMessage
}

// Report is the outcome of [Compare].
type Report struct {
	// Compared are the tools compared (both sides have them), in sidecar order.
	Compared []string
	// Mismatches are the differences, each naming the tool and field.
	Mismatches []string
	// NotModelled are the sidecar's tools the stack does not compose.
	NotModelled []string
}

// Compare compares ours with the sidecar's tools.
func Compare(expected []Expected, ours []Schema) Report {
	var rep Report
	mine := map[string]Schema{}
	for _, s := range ours {
		mine[s.Name] = s
	}
	listed := map[string]bool{}
	for _, e := range expected {
		listed[e.Name] = true
		s, ok := mine[e.Name]
		if !ok {
			rep.NotModelled = append(rep.NotModelled, e.Name)
			continue
		}
		rep.Compared = append(rep.Compared, e.Name)
		want, err := parse(e.Raw)
		if err != nil {
			rep.Mismatches = append(rep.Mismatches, fmt.Sprintf("%s: the recorded schema does not parse: %v", e.Name, err))
			continue
		}
		got, err := parse(s.JSON())
		if err != nil {
			rep.Mismatches = append(rep.Mismatches, fmt.Sprintf("%s: our schema does not parse: %v", e.Name, err))
			continue
		}
		for _, d := range diff("", want, got) {
			rep.Mismatches = append(rep.Mismatches, e.Name+": "+d)
		}
	}
	for _, s := range ours {
		if !listed[s.Name] {
			rep.Mismatches = append(rep.Mismatches, fmt.Sprintf("%s: the stack composes it, but upstream's header does not list it", s.Name))
		}
	}
	return rep
}

// node is an ordered JSON value.
type node struct {
	kind   byte // '{', '[', 's' string, 'n' number, 'b' bool, '0' null
	keys   []string
	vals   []*node
	text   string // string value, number text, "true"/"false"
	parsed any    // the plain value, for messages
}

func parse(data []byte) (*node, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	n, err := parseValue(dec)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("trailing data after the JSON value")
	}
	return n, nil
}

func parseValue(dec *json.Decoder) (*node, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		n := &node{kind: byte(t)}
		for dec.More() {
			if t == '{' {
				k, err := dec.Token()
				if err != nil {
					return nil, err
				}
				n.keys = append(n.keys, k.(string))
			}
			v, err := parseValue(dec)
			if err != nil {
				return nil, err
			}
			n.vals = append(n.vals, v)
		}
		if _, err := dec.Token(); err != nil { // the closing delimiter
			return nil, err
		}
		return n, nil
	case string:
		return &node{kind: 's', text: t, parsed: t}, nil
	case json.Number:
		return &node{kind: 'n', text: t.String(), parsed: t}, nil
	case bool:
		return &node{kind: 'b', text: fmt.Sprint(t), parsed: t}, nil
	}
	return &node{kind: '0', text: "null"}, nil
}

func (n *node) plain() any {
	switch n.kind {
	case '{':
		m := map[string]any{}
		for i, k := range n.keys {
			m[k] = n.vals[i].plain()
		}
		return m
	case '[':
		out := make([]any, len(n.vals))
		for i, v := range n.vals {
			out[i] = v.plain()
		}
		return out
	}
	return n.parsed
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// diff lists the differences of two ordered values below path.
func diff(path string, e, g *node) []string {
	at := path
	if at == "" {
		at = "(the tool)"
	}
	if e.kind != g.kind {
		return []string{fmt.Sprintf("%s: expected %s, got %s", at, projection.Show(e.plain()), projection.Show(g.plain()))}
	}
	switch e.kind {
	case '{':
		var out []string
		for i, k := range e.keys {
			j := slices.Index(g.keys, k)
			if j < 0 {
				out = append(out, fmt.Sprintf("%s: missing in ours (expected %s)", join(path, k), projection.Show(e.vals[i].plain())))
				continue
			}
			out = append(out, diff(join(path, k), e.vals[i], g.vals[j])...)
		}
		for j, k := range g.keys {
			if !slices.Contains(e.keys, k) {
				out = append(out, fmt.Sprintf("%s: not in the recording (ours: %s)", join(path, k), projection.Show(g.vals[j].plain())))
			}
		}
		common := func(a, b []string) []string {
			return slices.DeleteFunc(slices.Clone(a), func(k string) bool { return !slices.Contains(b, k) })
		}
		if ec, gc := common(e.keys, g.keys), common(g.keys, e.keys); !slices.Equal(ec, gc) {
			out = append(out, fmt.Sprintf("%s: key order: expected [%s], got [%s]", at, strings.Join(ec, " "), strings.Join(gc, " ")))
		}
		return out
	case '[':
		var out []string
		for i := range max(len(e.vals), len(g.vals)) {
			p := fmt.Sprintf("%s[%d]", path, i)
			switch {
			case i >= len(g.vals):
				out = append(out, fmt.Sprintf("%s: missing in ours (expected %s)", p, projection.Show(e.vals[i].plain())))
			case i >= len(e.vals):
				out = append(out, fmt.Sprintf("%s: not in the recording (ours: %s)", p, projection.Show(g.vals[i].plain())))
			default:
				out = append(out, diff(p, e.vals[i], g.vals[i])...)
			}
		}
		return out
	case 's':
		if e.text != g.text {
			ds := projection.DiffValues(at, e.text, g.text)
			return []string{ds[0].String()}
		}
	default:
		if e.text != g.text {
			return []string{fmt.Sprintf("%s: expected %s, got %s", at, e.text, g.text)}
		}
	}
	return nil
}
