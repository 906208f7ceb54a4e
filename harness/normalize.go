package harness

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
)

// Placeholders written into effect files in place of varying text.
const (
	// WorkspacePlaceholder stands for the workspace root of a run.
	WorkspacePlaceholder = "<ws>"
	// TempPlaceholder stands for a temporary directory of a run.
	TempPlaceholder = "<tmp>"
	// TimePlaceholder stands for a wall-clock time (RFC 3339 text or epoch milliseconds).
	TimePlaceholder = "<time>"
)

var (
	rfc3339Re = regexp.MustCompile(`\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2})?\b`)
	uuidRe    = regexp.MustCompile(`\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b`)
)

// Normalizer rewrites the parts of an output that vary between runs (paths,
// times, ids) into stable placeholders, so that effect files and goldens are
// deterministic. Build one per run:
//
//	n := harness.NewNormalizer().Workspace(ws).Temp(tmp)
//	out := n.String(text)
//
// Rules apply in a fixed order: paths (longest first, see [Replacer]), then
// RFC 3339 times, then epoch-millisecond JSON fields named with
// [Normalizer.JSONTimes], then id patterns ([Normalizer.IDs]; UUIDs are on by
// default). Ids are numbered in order of first appearance (<uuid-1>,
// <uuid-2>, ...), so two mentions of the same id stay visibly the same. The
// numbering lives in the Normalizer: normalise the texts of one run with one
// Normalizer, in a deterministic order.
type Normalizer struct {
	paths   Replacer
	times   bool
	jsonRe  *regexp.Regexp
	idRules []idRule
	seen    map[string]string
	counts  map[string]int
}

type idRule struct {
	prefix string
	re     *regexp.Regexp
}

// NewNormalizer returns a Normalizer that rewrites RFC 3339 times to <time>
// and UUIDs to <uuid-N>; add paths with [Normalizer.Workspace],
// [Normalizer.Temp] and [Normalizer.Path].
func NewNormalizer() *Normalizer {
	n := &Normalizer{times: true, seen: map[string]string{}, counts: map[string]int{}}
	n.idRules = append(n.idRules, idRule{prefix: "uuid", re: uuidRe})
	return n
}

// Workspace maps dir (and its symlink-resolved form) to <ws>.
func (n *Normalizer) Workspace(dir string) *Normalizer {
	return n.Path(dir, WorkspacePlaceholder)
}

// Temp maps dir (and its symlink-resolved form) to <tmp>.
func (n *Normalizer) Temp(dir string) *Normalizer {
	return n.Path(dir, TempPlaceholder)
}

// Path maps dir to placeholder. The cleaned form and the symlink-resolved form
// (when it differs) are both registered, so /tmp/x and /private/tmp/x, or a
// path given with a trailing slash, normalise alike. An empty dir is ignored.
func (n *Normalizer) Path(dir, placeholder string) *Normalizer {
	if dir == "" {
		return n
	}
	clean := filepath.Clean(dir)
	n.paths.Add(clean, placeholder)
	if real, err := filepath.EvalSymlinks(clean); err == nil && real != clean {
		n.paths.Add(real, placeholder)
	}
	return n
}

// Literal maps an exact string to placeholder (no path cleaning).
func (n *Normalizer) Literal(old, placeholder string) *Normalizer {
	n.paths.Add(old, placeholder)
	return n
}

// JSONTimes rewrites JSON number fields with the given keys that hold epoch
// milliseconds (as in the session log's "time" and "createdAt") to the string
// "<time>": `"time":1785498828287` becomes `"time":"<time>"`.
func (n *Normalizer) JSONTimes(keys ...string) *Normalizer {
	if len(keys) == 0 {
		return n
	}
	quoted := make([]string, len(keys))
	for i, k := range keys {
		quoted[i] = regexp.QuoteMeta(k)
	}
	n.jsonRe = regexp.MustCompile(`("(?:` + strings.Join(quoted, "|") + `)"\s*:\s*)\d{10,16}\b`)
	return n
}

// IDs numbers every match of re as <prefix-N>, N counting distinct matches
// from 1 in order of first appearance (shared across all texts this
// Normalizer sees). Use it for call ids, session ids, pids.
func (n *Normalizer) IDs(prefix string, re *regexp.Regexp) *Normalizer {
	n.idRules = append(n.idRules, idRule{prefix: prefix, re: re})
	return n
}

// String returns s with every rule applied.
func (n *Normalizer) String(s string) string {
	s = n.paths.Replace(s)
	if n.times {
		s = rfc3339Re.ReplaceAllString(s, TimePlaceholder)
	}
	if n.jsonRe != nil {
		s = n.jsonRe.ReplaceAllString(s, `${1}"`+TimePlaceholder+`"`)
	}
	for _, r := range n.idRules {
		s = r.re.ReplaceAllStringFunc(s, func(id string) string {
			key := r.prefix + "\x00" + id
			if p, ok := n.seen[key]; ok {
				return p
			}
			n.counts[r.prefix]++
			p := fmt.Sprintf("<%s-%d>", r.prefix, n.counts[r.prefix])
			n.seen[key] = p
			return p
		})
	}
	return s
}

// Bytes is [Normalizer.String] for byte slices.
func (n *Normalizer) Bytes(b []byte) []byte { return []byte(n.String(string(b))) }
