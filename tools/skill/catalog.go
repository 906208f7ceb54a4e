package skill

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/dshsim/dshsim/internal/jsjson"
)

// Ranks of the roots: a lower rank wins a name.
const (
	RankProjectDsh    = 100
	RankProjectAgents = 200
	RankUserDsh       = 400
	RankUserAgents    = 500
)

// nameRE is the public skill-name grammar (kebab case).
var nameRE = regexp.MustCompile(`^[a-z0-9]+(?:-[a-z0-9]+)*$`)

// IsName reports whether s is a valid skill name.
func IsName(s string) bool { return nameRE.MatchString(s) }

// Skill is one discovered skill.
type Skill struct {
	Name, Description string
	// ModelInvocable and UserInvocable are the invocation controls
	// (disable-model-invocation, user-invocable).
	ModelInvocable, UserInvocable bool
	// Dir is the resource base directory; Path the SKILL.md (or flat .md).
	Dir, Path string
	// Source names the root (project-dsh, project-agents, user-dsh,
	// user-agents); Rank is its rank.
	Source string
	Rank   int
}

// Root is one skill root.
type Root struct {
	Path, Source string
	Rank         int
	// SkipSystem leaves out a ".system" entry.
	SkipSystem bool
}

// Roots are the roots for a session cwd: the project's .dsh/skills and
// .agents/skills (the project root is the nearest ancestor with a .git,
// else cwd), then <dshHome>/skills and <agentsHome>/skills.
func Roots(cwd, dshHome, agentsHome string) []Root {
	var roots []Root
	if cwd != "" {
		p := projectRoot(cwd)
		roots = append(roots, Root{filepath.Join(p, ".dsh/skills"), "project-dsh", RankProjectDsh, false},
			Root{filepath.Join(p, ".agents/skills"), "project-agents", RankProjectAgents, false})
	}
	if dshHome != "" {
		roots = append(roots, Root{filepath.Join(dshHome, "skills"), "user-dsh", RankUserDsh, true})
	}
	if agentsHome != "" {
		roots = append(roots, Root{filepath.Join(agentsHome, "skills"), "user-agents", RankUserAgents, false})
	}
	return roots
}

func projectRoot(cwd string) string {
	cur := filepath.Clean(cwd)
	for {
		if _, err := os.Lstat(filepath.Join(cur, ".git")); err == nil {
			return cur
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return filepath.Clean(cwd)
		}
		cur = parent
	}
}

// Discover lists the skills of roots: per root its directory bundles
// (<dir>/SKILL.md) and flat .md files, entries in name order; a file that
// cannot be used is skipped with a warning (warn may be nil). Within the
// merged list the lowest rank wins a name; the result is sorted by name.
func Discover(roots []Root, warn func(string)) []Skill {
	if warn == nil {
		warn = func(string) {}
	}
	var all []Skill
	for _, r := range roots {
		all = append(all, discoverRoot(r, warn)...)
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].Rank < all[j].Rank })
	seen := map[string]bool{}
	var out []Skill
	for _, s := range all {
		if seen[s.Name] {
			warn(fmt.Sprintf("skill %q from %s ignored because a higher-priority skill already exists", s.Name, s.Source))
			continue
		}
		seen[s.Name] = true
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func discoverRoot(r Root, warn func(string)) []Skill {
	ents, err := os.ReadDir(r.Path)
	if err != nil {
		return nil // an absent root has no skills
	}
	sort.SliceStable(ents, func(i, j int) bool { return localeLess(ents[i].Name(), ents[j].Name()) })
	var out []Skill
	for _, e := range ents {
		if r.SkipSystem && e.Name() == ".system" {
			continue
		}
		full := filepath.Join(r.Path, e.Name())
		st, err := os.Stat(full) // a symlink counts as what it points to
		if err != nil {
			warn(fmt.Sprintf("skill entry %s ignored: failed to follow symbolic link: %v", full, err))
			continue
		}
		var path, dir string
		switch {
		case st.IsDir():
			path, dir = filepath.Join(full, "SKILL.md"), full
		case st.Mode().IsRegular() && strings.HasSuffix(e.Name(), ".md"):
			path, dir = full, r.Path
		default:
			continue
		}
		s, _, ok := parseFile(path, warn)
		if !ok {
			continue
		}
		s.Dir, s.Path, s.Source, s.Rank = dir, path, r.Source, r.Rank
		out = append(out, s)
	}
	return out
}

// localeLess orders entry names roughly as JavaScript's localeCompare does
// (case folded first, then code points).
func localeLess(a, b string) bool {
	la, lb := strings.ToLower(a), strings.ToLower(b)
	if la != lb {
		return la < lb
	}
	return a > b // lower case first on a tie, as ICU orders it
}

// Load reads a skill's body (front matter removed, trimmed).
func Load(s Skill, warn func(string)) (Skill, string, bool) {
	if warn == nil {
		warn = func(string) {}
	}
	got, body, ok := parseFile(s.Path, warn)
	if !ok {
		return Skill{}, "", false
	}
	got.Dir, got.Path, got.Source, got.Rank = s.Dir, s.Path, s.Source, s.Rank
	return got, body, true
}

// parseFile reads one skill file: its text (a NUL or invalid UTF-8 skips
// it), YAML front matter between "---" lines with a non-empty string name
// (a valid skill name) and description, the invocation controls, and the
// body after the front matter, trimmed.
func parseFile(path string, warn func(string)) (Skill, string, bool) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Skill{}, "", false
	}
	if bytes.IndexByte(data, 0) >= 0 || !utf8.Valid(data) {
		warn(fmt.Sprintf("skill file %s ignored: failed to read text file at %s: not UTF-8 text", path, path))
		return Skill{}, "", false
	}
	front, body, ok, err := splitFrontMatter(string(data))
	if err != nil {
		warn(fmt.Sprintf("skill file %s ignored: invalid YAML frontmatter: %v", path, err))
		return Skill{}, "", false
	}
	if !ok {
		warn(fmt.Sprintf("skill file %s ignored: missing YAML frontmatter", path))
		return Skill{}, "", false
	}
	name, _ := front["name"].(string)
	desc, _ := front["description"].(string)
	if name == "" || desc == "" {
		warn(fmt.Sprintf("skill file %s ignored: frontmatter requires name and description", path))
		return Skill{}, "", false
	}
	if !IsName(name) {
		warn(fmt.Sprintf("skill file %s ignored: invalid skill name %q", path, name))
		return Skill{}, "", false
	}
	model, user, err := invocation(front)
	if err != nil {
		warn(fmt.Sprintf("skill file %s ignored: invalid invocation frontmatter: %v", path, err))
		return Skill{}, "", false
	}
	return Skill{Name: name, Description: desc, ModelInvocable: model, UserInvocable: user}, jsjson.Trim(body), true
}

// splitFrontMatter splits "---\n<yaml>\n---\n<body>" (CR before a newline
// allowed on the fences); ok is false without front matter or when the
// YAML is not a mapping.
func splitFrontMatter(raw string) (map[string]any, string, bool, error) {
	nl := strings.IndexByte(raw, '\n')
	if nl < 0 || strings.TrimSuffix(raw[:nl], "\r") != "---" {
		return nil, "", false, nil
	}
	start := nl + 1
	for ls := start; ls <= len(raw); {
		next := strings.IndexByte(raw[ls:], '\n')
		end := len(raw)
		if next >= 0 {
			end = ls + next
		}
		if strings.TrimSuffix(raw[ls:end], "\r") == "---" {
			bodyStart := len(raw)
			if next >= 0 {
				bodyStart = end + 1
			}
			var m map[string]any
			var v any
			if err := yaml.Unmarshal([]byte(raw[start:ls]), &v); err != nil {
				return nil, "", false, err
			}
			m, isMap := v.(map[string]any)
			if !isMap {
				return nil, "", false, nil
			}
			return m, raw[bodyStart:], true, nil
		}
		if next < 0 {
			return nil, "", false, nil
		}
		ls = end + 1
	}
	return nil, "", false, nil
}

// invocation reads disable-model-invocation and user-invocable (legacy
// camel-case keys are refused).
func invocation(front map[string]any) (model, user bool, err error) {
	for legacy, canonical := range map[string]string{"disableModelInvocation": "disable-model-invocation", "modelInvocable": "disable-model-invocation", "userInvocable": "user-invocable"} {
		if _, ok := front[legacy]; ok {
			return false, false, fmt.Errorf("frontmatter field %q is unsupported; use %q", legacy, canonical)
		}
	}
	disable, err := boolField(front, "disable-model-invocation")
	if err != nil {
		return false, false, err
	}
	userInv, err := boolField(front, "user-invocable")
	if err != nil {
		return false, false, err
	}
	return disable == nil || !*disable, userInv == nil || *userInv, nil
}

func boolField(front map[string]any, key string) (*bool, error) {
	v, ok := front[key]
	if !ok {
		return nil, nil
	}
	t, f := true, false
	switch x := v.(type) {
	case bool:
		return &x, nil
	case int:
		if x == 1 {
			return &t, nil
		}
		if x == 0 {
			return &f, nil
		}
	case string:
		switch strings.ToLower(x) {
		case "1", "true", "yes", "on":
			return &t, nil
		case "0", "false", "no", "off":
			return &f, nil
		}
	}
	return nil, fmt.Errorf("frontmatter field %q must be a boolean", key)
}

// Entry is one catalog entry as the catalog message's source records it.
type Entry struct {
	Name        string `json:"name"`
	Description string `json:"description"`
}

// CatalogDescriptionMaxLength bounds an entry's description (UTF-16 units).
const CatalogDescriptionMaxLength = 500

// Entries are the catalog entries of the model-invocable skills: each
// description with whitespace runs collapsed, trimmed, and cut to max with
// "..." (unescaped).
func Entries(skills []Skill, max int) []Entry {
	out := []Entry{}
	for _, s := range skills {
		if !s.ModelInvocable {
			continue
		}
		d := strings.Join(strings.Fields(s.Description), " ")
		if u := utf16.Encode([]rune(d)); len(u) > max {
			d = string(utf16.Decode(u[:max-3])) + "..."
		}
		out = append(out, Entry{s.Name, d})
	}
	return out
}

// Digest identifies a catalog by its entries.
func Digest(entries []Entry) string {
	lines := make([]string, len(entries))
	for i, e := range entries {
		lines[i] = jsonArray(e.Name, e.Description)
	}
	sum := sha256.Sum256([]byte(strings.Join(lines, "\n")))
	return hex.EncodeToString(sum[:])
}

func jsonArray(a, b string) string { return "[" + jsjson.Quote(a) + "," + jsjson.Quote(b) + "]" }
