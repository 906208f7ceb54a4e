package diff

import (
	"bytes"
	"context"
	"encoding/json"
	"sort"

	"github.com/dshsim/dshsim/harness/oracle"
)

// Test reports whether a candidate script still shows the difference.
type Test func(ctx context.Context, s *oracle.Script) (bool, error)

// Shrink makes s smaller while test holds, by delta debugging: first over
// its calls (ddmin: remove halves, quarters, ... down to single calls; a
// step left without calls goes), then over the keys of each remaining
// call's arguments, then over the workspace files and the permission
// answers, one at a time. s itself is not changed; the result is 1-minimal
// in each of those units. tests counts the candidates tried.
func Shrink(ctx context.Context, s *oracle.Script, test Test) (min *oracle.Script, tests int, err error) {
	try := func(c *oracle.Script) (bool, error) {
		if c.Check() != nil {
			return false, nil
		}
		tests++
		return test(ctx, c)
	}
	cur := s.Clone()
	calls := callRefs(cur)
	keep, err := ddmin(calls, func(subset []callRef) (bool, error) { return try(withCalls(cur, subset)) })
	if err != nil {
		return nil, tests, err
	}
	cur = withCalls(cur, keep)
	if cur, err = shrinkArgs(cur, try); err != nil {
		return nil, tests, err
	}
	if cur, err = shrinkFiles(cur, try); err != nil {
		return nil, tests, err
	}
	for i := len(cur.PermissionAnswers) - 1; i >= 0; i-- {
		c := cur.Clone()
		c.PermissionAnswers = append(c.PermissionAnswers[:i:i], c.PermissionAnswers[i+1:]...)
		if ok, err := try(c); err != nil {
			return nil, tests, err
		} else if ok {
			cur = c
		}
	}
	return cur, tests, nil
}

// callRef is the place of one call: turn, step, index in the step.
type callRef struct{ turn, step, call int }

func callRefs(s *oracle.Script) []callRef {
	var out []callRef
	for ti, t := range s.Turns {
		for si, st := range t {
			for ci := range st.Calls {
				out = append(out, callRef{ti, si, ci})
			}
		}
	}
	return out
}

// withCalls is s with only the calls in keep (text steps stay; a step
// whose calls all went goes).
func withCalls(s *oracle.Script, keep []callRef) *oracle.Script {
	in := map[callRef]bool{}
	for _, r := range keep {
		in[r] = true
	}
	c := s.Clone()
	for ti, t := range s.Turns {
		var steps []oracle.Step
		for si, st := range t {
			if len(st.Calls) == 0 {
				steps = append(steps, st)
				continue
			}
			var calls []oracle.Call
			for ci, call := range st.Calls {
				if in[callRef{ti, si, ci}] {
					calls = append(calls, call)
				}
			}
			if len(calls) > 0 {
				steps = append(steps, oracle.Step{Calls: calls})
			}
		}
		c.Turns[ti] = steps
	}
	return c
}

// ddmin is Zeller's delta debugging minimisation: the smallest subset of
// units (1-minimal: no single unit can go) for which test holds, assuming
// it holds for all of them.
func ddmin[T any](units []T, test func([]T) (bool, error)) ([]T, error) {
	n := 2
	for len(units) >= 2 {
		chunks := split(units, n)
		reduced := false
		for i := range chunks {
			complement := without(chunks, i)
			ok, err := test(complement)
			if err != nil {
				return nil, err
			}
			if ok {
				units, n, reduced = complement, max(n-1, 2), true
				break
			}
		}
		if !reduced {
			if n >= len(units) {
				break
			}
			n = min(n*2, len(units))
		}
	}
	if len(units) == 1 {
		if ok, err := test(nil); err != nil {
			return nil, err
		} else if ok {
			return nil, nil
		}
	}
	return units, nil
}

func split[T any](units []T, n int) [][]T {
	var out [][]T
	for i := range n {
		lo, hi := i*len(units)/n, (i+1)*len(units)/n
		if lo < hi {
			out = append(out, units[lo:hi])
		}
	}
	return out
}

func without[T any](chunks [][]T, skip int) []T {
	var out []T
	for i, c := range chunks {
		if i != skip {
			out = append(out, c...)
		}
	}
	return out
}

// shrinkArgs drops argument keys one at a time where the difference stays.
func shrinkArgs(s *oracle.Script, try func(*oracle.Script) (bool, error)) (*oracle.Script, error) {
	for _, ref := range callRefs(s) {
		keys := argKeys(s.Turns[ref.turn][ref.step].Calls[ref.call].Args)
		for _, k := range keys {
			c := s.Clone()
			call := &c.Turns[ref.turn][ref.step].Calls[ref.call]
			args, ok := dropKey(call.Args, k)
			if !ok {
				continue
			}
			call.Args = args
			if ok, err := try(c); err != nil {
				return nil, err
			} else if ok {
				s = c
			}
		}
	}
	return s, nil
}

// argKeys are the keys of an arguments object, in order (nil when the
// arguments are not an object).
func argKeys(args json.RawMessage) []string {
	var ordered []string
	dec := json.NewDecoder(bytes.NewReader(args))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil
		}
		ordered = append(ordered, t.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return nil
		}
	}
	return ordered
}

// dropKey is args without key k, the other keys in their order.
func dropKey(args json.RawMessage, k string) (json.RawMessage, bool) {
	keys := argKeys(args)
	var m map[string]json.RawMessage
	if keys == nil || json.Unmarshal(args, &m) != nil {
		return nil, false
	}
	var out obj
	for _, key := range keys {
		if key != k {
			out = append(out, kv{key, m[key]})
		}
	}
	return raw(out), true
}

// shrinkFiles drops workspace files one at a time where the difference stays.
func shrinkFiles(s *oracle.Script, try func(*oracle.Script) (bool, error)) (*oracle.Script, error) {
	var names []string
	for n := range s.Workspace {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		c := s.Clone()
		delete(c.Workspace, n)
		if ok, err := try(c); err != nil {
			return nil, err
		} else if ok {
			s = c
		}
	}
	return s, nil
}
