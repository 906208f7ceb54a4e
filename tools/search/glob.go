package search

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/dshsim/dshsim/pipeline"
)

// GlobName is the glob tool's name.
const GlobName = "glob"

// VCSExcludes are the VCS metadata directories a glob never lists.
var VCSExcludes = []string{".git", ".svn", ".hg", ".bzr", ".jj", ".sl"}

// GlobSection is the tool:glob prompt section (order 103) for the
// deployment's sampling switch (VERBATIM).
func GlobSection(sample bool) string {
	tail := "while a larger one keeps the modification-time-ordered head."
	if sample {
		tail = "while a larger one is sampled across top-level entries, so it spans the tree instead of one subtree."
	}
	return `Use the glob tool — not shell find — to discover files by path pattern. A pattern with no "/" matches basenames at any depth, so "*" matches every file in the tree rather than its top level. Results are files only, never directories, and include hidden and ignored files: a result that fits comes back in modification-time order, ` + tail
}

// GlobDescription is glob's description for a cap and the sampling switch.
func GlobDescription(max int, sample bool) string {
	over := fmt.Sprintf("a larger result returns the first %d paths in modification-time order", max)
	if sample {
		over = fmt.Sprintf("a larger result instead returns %d paths sampled across top-level entries", max)
	}
	return fmt.Sprintf("Find files whose paths match a glob pattern. Returns matching file paths — never directories — including hidden and ignored files (VCS metadata directories are excluded). Up to %d paths come back in modification-time order; %s, says so, and reports where the complete sorted list was saved. This tool does not enumerate directory entries.", max, over)
}

const globParameters = `{"type":"object","properties":{"pattern":{"type":"string","description":"Glob pattern to match file paths against (e.g. \"**/*.ts\", \"src/**/*.test.js\"). A pattern with no \"/\" matches the basename at any depth, so \"*\" and \"*.ts\" both search the whole tree; include a separator to anchor the depth."},"path":{"type":"string","description":"Directory to search in. Defaults to the session workspace; a relative path resolves against it."}},"required":["pattern"]}`

var globOutputSchema = json.RawMessage(`{"type":"object","additionalProperties":false,"properties":{"root":{"type":"string"},"paths":{"type":"array","items":{"type":"string"}}},"required":["root","paths"]}`)

func (c Config) globTool() pipeline.Tool {
	return pipeline.Tool{
		Name: GlobName, Description: GlobDescription(c.GlobMaxResults, c.SampleOverCapGlobResults),
		Parameters: json.RawMessage(globParameters), OutputSchema: globOutputSchema, Run: c.runGlob,
	}
}

// GlobArgv is the rg argv of one glob (without the program and
// --no-config): files only, modification-time order, ignored and hidden
// files included, VCS metadata excluded at any depth and inside, the
// search root behind "--".
func GlobArgv(pattern string, path *string) []string {
	argv := []string{"--files", "--glob=" + pattern, "--sort=modified", "--no-ignore", "--hidden"}
	for _, n := range VCSExcludes {
		argv = append(argv, "--glob=!**/"+n, "--glob=!**/"+n+"/**")
	}
	if path != nil {
		argv = append(argv, "--", *path)
	}
	return argv
}

type globArgs struct {
	Pattern string  `json:"pattern"`
	Path    *string `json:"path"`
}

func (c Config) runGlob(ctx context.Context, call *pipeline.Call) (pipeline.Output, error) {
	var a globArgs
	if err := call.DecodeArgs(&a); err != nil {
		return pipeline.Output{}, errNotObject
	}
	if strings.TrimSpace(a.Pattern) == "" {
		return pipeline.Output{}, errors.New("pattern must be a non-empty string")
	}
	if a.Path != nil && strings.TrimSpace(*a.Path) == "" {
		return pipeline.Output{}, errors.New("path must be a non-empty string when given")
	}
	r, err := c.ripgrep(ctx, call, GlobName, GlobArgv(a.Pattern, a.Path))
	if err != nil {
		return pipeline.Output{}, err
	}
	root := "."
	if a.Path != nil {
		root = toWorkdirRelative(*a.Path, r.workdir)
	}
	paths := []string{}
	if !r.noMatches {
		listed := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
		for _, line := range SortByModified(listed, r.workdir) {
			if line != "" {
				paths = append(paths, toWorkdirRelative(line, r.workdir))
			}
		}
	}
	var saved *Saved
	if len(paths) > c.GlobMaxResults && call.Parent() == nil && c.Save != nil {
		if s, ok := c.Save(call, "glob-results.txt", strings.Join(paths, "\n")); ok {
			saved = &s
		}
	}
	page, truncated := c.globPage(paths, root)
	return pipeline.Output{
		Value: marshal(struct {
			Root  string   `json:"root"`
			Paths []string `json:"paths"`
		}{root, paths}),
		Content: []pipeline.Block{pipeline.TextBlock(c.RenderGlob(paths, root, saved))},
		Meta:    c.globMeta(page, truncated, len(paths)),
	}, nil
}

// RenderGlob is glob's text: "No files found", the paths within the cap,
// or the over-cap page (head or top-level sample) with its footer.
func (c Config) RenderGlob(paths []string, root string, saved *Saved) string {
	switch {
	case len(paths) == 0:
		return "No files found"
	case len(paths) <= c.GlobMaxResults:
		return strings.Join(paths, "\n")
	case !c.SampleOverCapGlobResults:
		return globPage(paths[:c.GlobMaxResults], len(paths), saved, ".")
	}
	s := SampleAcrossTopLevel(paths, c.GlobMaxResults, root)
	basis := "."
	if s.Total != len(paths) {
		basis = fmt.Sprintf(", sampled across %d of the %d top-level entries this pattern matched instead of taken in modification-time order.", s.Shown, s.Total)
		if s.Shown < s.Total {
			basis += " Narrow path to inspect a specific subtree."
		}
	}
	return globPage(s.Items, len(paths), saved, basis)
}

func globPage(items []string, seen int, saved *Saved, basis string) string {
	recovery := "The complete result could not be saved; narrow pattern or path to see more."
	if saved != nil {
		recovery = "Full sorted result stored at: " + saved.Locator + ". " + saved.RetrievalHint
	}
	return fmt.Sprintf("%s\n\n(Showing %d of %d paths%s %s)", strings.Join(items, "\n"), len(items), seen, basis, recovery)
}

// globPage is the page the meta shows: the same paths the text shows.
func (c Config) globPage(paths []string, root string) ([]string, bool) {
	switch {
	case len(paths) <= c.GlobMaxResults:
		return paths, false
	case !c.SampleOverCapGlobResults:
		return paths[:c.GlobMaxResults], true
	}
	return SampleAcrossTopLevel(paths, c.GlobMaxResults, root).Items, true
}

type pathsMeta struct {
	Shape     string   `json:"shape"`
	Paths     []string `json:"paths"`
	Truncated bool     `json:"truncated"`
	Total     int      `json:"total"`
}

func (c Config) globMeta(page []string, truncated bool, total int) json.RawMessage {
	page, forced := capMeta(page, func(items []string, t bool) bool {
		return len(marshal(pathsMeta{"paths", items, truncated || t, total})) <= c.MetaMaxBytes
	})
	return marshal(pathsMeta{"paths", page, truncated || forced, total})
}

// SortByModified orders rg's listing by modification time, oldest first,
// over the whole list (stable: ties keep rg's order; a path that cannot be
// stat'ed sorts first). Upstream's ripgrep (15) sorts --sort=modified this
// way; Debian's rg 13 sorts within each directory only, directories by
// their own time, so its order is re-sorted here (a no-op on rg 15).
func SortByModified(paths []string, workdir string) []string {
	type entry struct {
		path string
		ok   bool
		at   time.Time
	}
	es := make([]entry, len(paths))
	for i, p := range paths {
		full := p
		if !filepath.IsAbs(full) {
			full = filepath.Join(workdir, p)
		}
		es[i].path = p
		if st, err := os.Stat(full); err == nil {
			es[i].ok, es[i].at = true, st.ModTime()
		}
	}
	sort.SliceStable(es, func(i, j int) bool {
		a, b := es[i], es[j]
		if a.ok != b.ok {
			return !a.ok
		}
		return a.at.Before(b.at)
	})
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.path
	}
	return out
}

// Sample is an over-cap page sampled across top-level entries.
type Sample struct {
	// Items are the page, grouped by entry in first-seen order.
	Items []string
	// Shown and Total count the entries on the page and in the result.
	Shown, Total int
}

// SampleAcrossTopLevel takes max paths round-robin across the top-level
// entries (relative to root) of paths: every entry gets a slot before any
// gets a second, entries and paths in first-seen order, the page grouped
// by entry.
func SampleAcrossTopLevel(paths []string, max int, root string) Sample {
	type group struct {
		key   string
		items []string
	}
	var groups []*group
	index := map[string]*group{}
	for _, p := range paths {
		key := topLevelSegment(relativeToRoot(p, root))
		g := index[key]
		if g == nil {
			g = &group{key: key}
			index[key] = g
			groups = append(groups, g)
		}
		g.items = append(g.items, p)
	}
	taken := make([][]string, len(groups))
	count := 0
	for pass := 0; count < max; pass++ {
		progressed := false
		for i, g := range groups {
			if count >= max {
				break
			}
			if pass < len(g.items) {
				taken[i] = append(taken[i], g.items[pass])
				count++
				progressed = true
			}
		}
		if !progressed {
			break
		}
	}
	s := Sample{Total: len(groups)}
	for _, t := range taken {
		if len(t) > 0 {
			s.Shown++
			s.Items = append(s.Items, t...)
		}
	}
	return s
}

// relativeToRoot removes the displayed search root from path.
func relativeToRoot(path, root string) string {
	if root == "." {
		return strings.TrimPrefix(path, "./")
	}
	trimmed := strings.TrimRight(root, "/")
	switch {
	case trimmed == "":
		return strings.TrimLeft(path, "/")
	case path == trimmed:
		return ""
	case strings.HasPrefix(path, trimmed+"/"):
		return path[len(trimmed)+1:]
	}
	return path
}

// topLevelSegment is the first path segment (leading separators stripped).
func topLevelSegment(path string) string {
	path = strings.TrimLeft(path, "/")
	if i := strings.IndexByte(path, '/'); i >= 0 {
		return path[:i]
	}
	return path
}
