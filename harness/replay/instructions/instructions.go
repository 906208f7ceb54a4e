package instructions

import (
	"bytes"
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"unicode/utf8"

	"github.com/dshsim/dshsim/fsobserve"
	"github.com/dshsim/dshsim/internal/jsjson"
)

// Defaults of upstream's configuration.
var (
	DefaultProjectRootMarkers = []string{".git"}
	DefaultCandidates         = []string{"AGENTS.md", "CLAUDE.md"}
	DefaultLocalCandidates    = []string{"AGENTS.local.md", "CLAUDE.local.md"}
	DefaultMaxBytes           = 65536
	DefaultMaxSourceBytes     = 1048576
	userGlobalDir             = "user-global"
	userGlobalFile            = "AGENTS.md"
	userGlobalDisplay         = "$DSH_HOME/AGENTS.md"
	scopeSeparator            = "\x00"
	sourceKind                = "agent-instructions"
	sourceForm                = "instructions"
)

// Config is the plugin's configuration for one session.
type Config struct {
	// Cwd is the session cwd (absolute); DshHome holds the user-global
	// AGENTS.md (upstream's snapshot runs: <cwd>/.dsh, shown as $DSH_HOME).
	Cwd, DshHome string
	// ProjectRootMarkers name the files that make a directory the root.
	ProjectRootMarkers []string
	// MaxBytes bounds a message; MaxSourceBytes a file read.
	MaxBytes, MaxSourceBytes int
	// Candidates and LocalCandidates are the file names looked for in each
	// directory, in this order.
	Candidates, LocalCandidates []string
}

// WithDefaults fills what is unset with upstream's defaults (MaxBytes
// stays: 0 is off).
func (c Config) WithDefaults() Config {
	if c.ProjectRootMarkers == nil {
		c.ProjectRootMarkers = DefaultProjectRootMarkers
	}
	if c.MaxSourceBytes == 0 {
		c.MaxSourceBytes = DefaultMaxSourceBytes
	}
	if c.Candidates == nil {
		c.Candidates = DefaultCandidates
	}
	if c.LocalCandidates == nil {
		c.LocalCandidates = DefaultLocalCandidates
	}
	return c
}

// identity is the baselineIdentity: what decides how a baseline was made.
func (c Config) identity(projectRoot string) string {
	rel, _ := filepath.Rel(c.Cwd, projectRoot)
	if rel == "." {
		rel = ""
	}
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // JSON.stringify writes <, > and & as they are
	_ = enc.Encode(struct {
		ProjectRoot                    string   `json:"projectRoot"`
		ProjectRootMarkers             []string `json:"projectRootMarkers"`
		MaxBytes                       int      `json:"maxBytes"`
		MaxSourceBytes                 int      `json:"maxSourceBytes"`
		InstructionFileCandidates      []string `json:"instructionFileCandidates"`
		LocalInstructionFileCandidates []string `json:"localInstructionFileCandidates"`
	}{rel, c.ProjectRootMarkers, c.MaxBytes, c.MaxSourceBytes, c.Candidates, c.LocalCandidates})
	return strings.TrimSuffix(b.String(), "\n")
}

// Change is one file's transition, as a message's source lists it.
type Change struct {
	Action string `json:"action"`
	Scope  string `json:"scope"`
	Path   string `json:"path"`
	Digest string `json:"digest,omitempty"`
}

// Source is an instructions message's source.
type Source struct {
	Kind             string   `json:"kind"`
	Form             string   `json:"form"`
	Baseline         bool     `json:"baseline,omitempty"`
	BaselineIdentity string   `json:"baselineIdentity,omitempty"`
	Changes          []Change `json:"changes"`
}

// Message is an instructions message: its text blocks and source.
type Message struct {
	Texts  []string
	Source Source
}

// Loader composes a session's instruction messages; it keeps what its last
// baseline left out (files read but not represented).
type Loader struct {
	cfg      Config
	prepared *preparation
}

type preparation struct {
	identity string
	excluded map[string]bool
}

// New returns a loader for cfg (its defaults filled).
func New(cfg Config) *Loader { return &Loader{cfg: cfg.WithDefaults()} }

// Composition is what the session shows when a message is composed.
type Composition struct {
	// Visible are the instruction messages on the session's surface, in log
	// order (a compacted one is not).
	Visible []Message
	// Claimed are the instruction messages the step claimed.
	Claimed []Message
	// Pending are the instruction messages waiting in the next-step inbox.
	Pending []Message
	// Touched are the paths the last step's file tools touched.
	Touched []string
}

// Compose returns the instructions message the session needs now (nil:
// none): with no touched path a pending one stands; otherwise the baseline
// when none is visible under this configuration, followed by the changes
// of the scopes in play since the visible messages.
func (l *Loader) Compose(c Composition) (*Message, error) {
	if l.cfg.MaxBytes <= 0 {
		return nil, nil
	}
	if len(c.Touched) == 0 && len(c.Pending) > 0 {
		p := c.Pending[0]
		return &p, nil
	}
	authority := slices.Clone(c.Claimed)
	root := findProjectRoot(l.cfg.Cwd, l.cfg.ProjectRootMarkers)
	identity := l.cfg.identity(root)
	visible := visibleBaseline(c.Visible, authority)
	keep := visible != nil && visible.BaselineIdentity == identity
	var excluded map[string]bool
	if keep && l.prepared != nil && l.prepared.identity == identity {
		excluded = l.prepared.excluded
	}
	var out Message
	var next *preparation
	if visible == nil || !keep || excluded == nil {
		var err error
		if out, authority, next, err = l.baseline(root, identity, visible, authority); err != nil {
			return nil, err
		}
		excluded = next.excluded
	}
	text, changes, err := l.reconcile(root, effectiveChanges(c.Visible, authority), c.Pending, keep, excluded, c.Touched)
	if err != nil {
		return nil, err
	}
	if text != "" {
		out.Texts = append(out.Texts, text)
		out.Source.Changes = append(out.Source.Changes, changes...)
	}
	if next != nil {
		l.prepared = next
	}
	if len(out.Texts) == 0 {
		return nil, nil
	}
	out.Source.Kind, out.Source.Form = sourceKind, sourceForm
	return &out, nil
}

// baseline loads the baseline and, when it has text and the visible one
// does not stand, returns it as the start of the message (the visible
// baseline's files it drops are removals) and among the authority.
func (l *Loader) baseline(root, identity string, visible *Source, authority []Message) (Message, []Message, *preparation, error) {
	replace := visible != nil && visible.BaselineIdentity != identity
	loaded, err := l.discover(root)
	if err != nil {
		return Message{}, nil, nil, err
	}
	deduped := dedupByDirectory(loaded)
	var r rendered
	if len(deduped) > 0 || replace {
		r = render(deduped, l.cfg.MaxBytes, baselineStyle(deduped, replace))
	}
	included := changesOf(r.represented)
	next := &preparation{identity: identity, excluded: map[string]bool{}}
	for _, c := range changesOf(loaded) {
		if !slices.ContainsFunc(included, func(i Change) bool { return i.Scope == c.Scope }) {
			next.excluded[c.Scope] = true
		}
	}
	var out Message
	if visible == nil || visible.BaselineIdentity != identity {
		if r.text != "" {
			var changes []Change
			if replace {
				for _, c := range visible.Changes {
					if c.Action != "remove" && !slices.ContainsFunc(included, func(i Change) bool { return i.Scope == c.Scope }) {
						changes = append(changes, Change{Action: "remove", Scope: c.Scope, Path: c.Path})
					}
				}
			}
			changes = append(changes, included...)
			out = Message{Texts: []string{r.text}, Source: Source{Baseline: true, BaselineIdentity: identity, Changes: changes}}
			authority = append(authority, Message{Texts: out.Texts, Source: Source{Kind: sourceKind, Form: sourceForm, Baseline: true, BaselineIdentity: identity, Changes: changes}})
		}
	}
	return out, authority, next, nil
}

// changesOf are the set changes of loaded files.
func changesOf(files []File) []Change {
	out := make([]Change, len(files))
	for i, f := range files {
		out[i] = Change{Action: "set", Scope: scopeKey(f.DisplayPath), Path: f.DisplayPath, Digest: digest(f.Content)}
	}
	return out
}

// visibleBaseline is the last baseline among the claimed messages, else on
// the surface.
func visibleBaseline(visible, authority []Message) *Source {
	for _, list := range [][]Message{authority, visible} {
		for i := len(list) - 1; i >= 0; i-- {
			if s := list[i].Source; s.Kind == sourceKind && s.Baseline {
				return &s
			}
		}
	}
	return nil
}

// effectiveChange is the last change said of a scope.
type effectiveChange struct {
	order []string
	by    map[string]Change
}

// effectiveChanges folds the visible messages, then the authority, into
// each scope's last change.
func effectiveChanges(visible, authority []Message) effectiveChange {
	e := effectiveChange{by: map[string]Change{}}
	for _, m := range slices.Concat(visible, authority) {
		if m.Source.Kind != sourceKind {
			continue
		}
		for _, c := range m.Source.Changes {
			if _, ok := e.by[c.Scope]; !ok {
				e.order = append(e.order, c.Scope)
			}
			e.by[c.Scope] = c
		}
	}
	return e
}

// scopeKey is a display path's scope: its directory and file name.
func scopeKey(displayPath string) string {
	return scopeDir(displayPath) + scopeSeparator + filepath.Base(displayPath)
}

func digest(content string) string {
	sum := sha1.Sum([]byte(content))
	return hex.EncodeToString(sum[:])
}

// findProjectRoot walks up from cwd to the first directory holding a
// marker (anything of that name); cwd when none does.
func findProjectRoot(cwd string, markers []string) string {
	for dir := filepath.Clean(cwd); ; dir = filepath.Dir(dir) {
		for _, m := range markers {
			if _, err := os.Lstat(filepath.Join(dir, m)); err == nil {
				return dir
			}
		}
		if filepath.Dir(dir) == dir {
			return filepath.Clean(cwd)
		}
	}
}

// ancestorChain lists the directories from root down to cwd.
func ancestorChain(root, cwd string) []string {
	var chain []string
	for dir := filepath.Clean(cwd); dir != filepath.Clean(root); dir = filepath.Dir(dir) {
		chain = append(chain, dir)
		if filepath.Dir(dir) == dir {
			break
		}
	}
	chain = append(chain, filepath.Clean(root))
	slices.Reverse(chain)
	return chain
}

// discover reads the baseline's candidates: user-global, then each
// directory from the root to the cwd, absolute paths once.
func (l *Loader) discover(root string) ([]File, error) {
	var files []File
	seen := map[string]bool{}
	add := func(abs, display string) error {
		if seen[abs] {
			return nil
		}
		content, err := read(abs, l.cfg.MaxSourceBytes)
		if err != nil || content == nil {
			return err
		}
		seen[abs] = true
		files = append(files, File{AbsolutePath: abs, DisplayPath: display, Content: *content})
		return nil
	}
	if err := add(filepath.Join(l.cfg.DshHome, userGlobalFile), userGlobalDisplay); err != nil {
		return nil, err
	}
	for _, dir := range ancestorChain(root, l.cfg.Cwd) {
		for _, name := range slices.Concat(l.cfg.Candidates, l.cfg.LocalCandidates) {
			abs := filepath.Join(dir, name)
			rel, _ := filepath.Rel(root, abs)
			if err := add(abs, rel); err != nil {
				return nil, err
			}
		}
	}
	return files, nil
}

// read returns a candidate's text as upstream's file service decodes it
// (nil: not a file, missing, unreadable, over maxBytes, a NUL byte among
// the first binarySample bytes, or not UTF-8, which upstream all skips); one
// leading byte-order mark is dropped. Only an unexpected error of the
// replay's own filesystem is an error.
func read(path string, maxBytes int) (*string, error) {
	fi, err := os.Stat(path)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > int64(maxBytes) {
		return nil, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, nil
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, int64(maxBytes)+1))
	if err != nil || len(data) > maxBytes {
		return nil, nil
	}
	s, ok := decodeText(data)
	if !ok {
		return nil, nil
	}
	return &s, nil
}

// binarySample is how many leading bytes upstream's file service looks at
// for a NUL byte (a binary file).
const binarySample = 8192

// decodeText is a file's text as upstream's file service reads it: a
// strict UTF-8 decoder that drops one leading byte-order mark; a file with
// a NUL byte among its first binarySample bytes or with bytes that are not
// UTF-8 has no text (false).
func decodeText(data []byte) (string, bool) {
	if bytes.IndexByte(data[:min(len(data), binarySample)], 0) >= 0 || !utf8.Valid(data) {
		return "", false
	}
	return string(fsobserve.DropByteOrderMark(data)), true
}

// probe stats a scope's file: present, absent, or unavailable (an error
// other than a missing path).
func probe(path string) (present, unavailable bool) {
	fi, err := os.Stat(path)
	switch {
	case err == nil:
		return fi.Mode().IsRegular(), false
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ENOTDIR):
		return false, false
	}
	return false, true
}

// dedupByDirectory drops a file whose trimmed text repeats an earlier one
// of the same directory.
func dedupByDirectory(files []File) []File {
	kept := map[string]map[string]bool{}
	var out []File
	for _, f := range files {
		dir := filepath.Dir(f.DisplayPath)
		if kept[dir] == nil {
			kept[dir] = map[string]bool{}
		}
		d := digest(jsjson.Trim(f.Content))
		if kept[dir][d] {
			continue
		}
		kept[dir][d] = true
		out = append(out, f)
	}
	return out
}
