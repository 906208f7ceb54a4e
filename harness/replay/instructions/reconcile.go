package instructions

import (
	"path/filepath"
	"slices"
	"strings"

	"github.com/dshsim/dshsim/internal/jsjson"
)

// orderedSet is a set that keeps its first-insertion order.
type orderedSet struct {
	order []string
	has   map[string]bool
}

func (s *orderedSet) add(k string) {
	if s.has == nil {
		s.has = map[string]bool{}
	}
	if !s.has[k] {
		s.has[k] = true
		s.order = append(s.order, k)
	}
}

// dirScopes adds every candidate's scope of directory (project relative,
// "." for the root).
func (l *Loader) dirScopes(s *orderedSet, directory string) {
	for _, name := range slices.Concat(l.cfg.Candidates, l.cfg.LocalCandidates) {
		s.add(directory + scopeSeparator + name)
	}
}

// relativeScope is dir's scope directory: relative to the root, "." for it.
func relativeScope(root, dir string) string {
	rel, err := filepath.Rel(root, dir)
	if err != nil || rel == "." {
		return "."
	}
	return rel
}

// descendantDirs are the directories from just below cwd down to the
// touched path's parent (none when it is not under cwd).
func descendantDirs(cwd, touched string) []string {
	target := touched
	if !filepath.IsAbs(target) {
		target = filepath.Join(cwd, target)
	}
	targetDir := filepath.Dir(filepath.Clean(target))
	rel, err := filepath.Rel(cwd, targetDir)
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, "../") {
		return nil
	}
	return ancestorChain(cwd, targetDir)[1:]
}

// scopePath is the absolute path and display path of a scope's file.
func (l *Loader) scopePath(root, scope string) (abs, display string) {
	dir, name, _ := strings.Cut(scope, scopeSeparator)
	switch dir {
	case userGlobalDir:
		return filepath.Join(l.cfg.DshHome, name), userGlobalDisplay
	case ".":
		abs = filepath.Join(root, name)
	default:
		abs = filepath.Join(root, dir, name)
	}
	rel, _ := filepath.Rel(root, abs)
	return abs, rel
}

// reconcile compares each scope in play with what the session says of it
// (effective) and renders the transitions: a file that appeared (set),
// changed (replace) or went away or became a duplicate (remove). The scopes
// in play: the baseline's (the root-to-cwd directories and user-global)
// when the visible baseline stands (else they are the baseline's own
// business), the pending messages' and the effective ones' directories,
// and the directories down to each touched path. A baseline scope the
// last baseline left out is removed when said before.
func (l *Loader) reconcile(root string, effective effectiveChange, pending []Message, includeBaseline bool, excluded map[string]bool, touched []string) (string, []Change, error) {
	var baseline, scopes orderedSet
	baseline.add(userGlobalDir + scopeSeparator + userGlobalFile)
	for _, dir := range ancestorChain(root, l.cfg.Cwd) {
		l.dirScopes(&baseline, relativeScope(root, dir))
	}
	if includeBaseline {
		for _, s := range baseline.order {
			scopes.add(s)
		}
	}
	for _, m := range pending {
		for _, c := range m.Source.Changes {
			if includeBaseline || !baseline.has[c.Scope] {
				scopes.add(c.Scope)
			}
		}
	}
	for _, s := range effective.order {
		if !includeBaseline && baseline.has[s] {
			continue
		}
		dir, _, _ := strings.Cut(s, scopeSeparator)
		if dir == userGlobalDir {
			scopes.add(userGlobalDir + scopeSeparator + userGlobalFile)
		} else {
			l.dirScopes(&scopes, dir)
		}
	}
	for _, t := range touched {
		for _, dir := range descendantDirs(l.cfg.Cwd, t) {
			l.dirScopes(&scopes, relativeScope(root, dir))
		}
	}
	items := l.transitions(root, scopes, baseline, effective, includeBaseline, excluded)
	if len(items) == 0 {
		return "", nil, nil
	}
	text, changes := renderChanges(items, l.cfg.MaxBytes)
	if text == "" || len(changes) == 0 {
		return "", nil, nil
	}
	return text, changes, nil
}

// transitions probes the scopes directory by directory. A directory whose
// file cannot be probed (an error other than a missing path) while it was
// said to exist is skipped whole, as upstream does.
func (l *Loader) transitions(root string, scopes, baseline orderedSet, effective effectiveChange, includeBaseline bool, excluded map[string]bool) []item {
	var dirs []string
	byDir := map[string][]string{}
	for _, s := range scopes.order {
		dir, _, _ := strings.Cut(s, scopeSeparator)
		if _, ok := byDir[dir]; !ok {
			dirs = append(dirs, dir)
		}
		byDir[dir] = append(byDir[dir], s)
	}
	var items []item
	seen := map[string]bool{}
	for _, dir := range dirs {
		start := len(items)
		kept := map[string]bool{}
		removal := func(scope string) {
			prev := effective.by[scope]
			items = append(items, item{Change{Action: "remove", Scope: scope, Path: prev.Path}, File{AbsolutePath: "removed:" + scope, DisplayPath: prev.Path}})
		}
		said := func(scope string) bool {
			prev, ok := effective.by[scope]
			return ok && prev.Action != "remove"
		}
		var added []string
		for _, scope := range byDir[dir] {
			if includeBaseline && baseline.has[scope] && excluded[scope] {
				if said(scope) {
					removal(scope)
				}
				continue
			}
			abs, display := l.scopePath(root, scope)
			present, unavailable := probe(abs)
			if unavailable {
				if !said(scope) {
					continue
				}
				items = items[:start]
				for _, a := range added {
					delete(seen, a)
				}
				break
			}
			if !present {
				if said(scope) {
					removal(scope)
				}
				continue
			}
			if seen[abs] {
				continue
			}
			seen[abs] = true
			added = append(added, abs)
			content, err := read(abs, l.cfg.MaxSourceBytes)
			if err != nil || content == nil {
				continue
			}
			d := digest(*content)
			trimmed := digest(jsjson.Trim(*content))
			if kept[trimmed] {
				if said(scope) {
					removal(scope)
				}
				continue
			}
			kept[trimmed] = true
			prev := effective.by[scope]
			if said(scope) && prev.Path == display && prev.Digest == d {
				continue
			}
			action := "replace"
			if !said(scope) {
				action = "set"
			}
			items = append(items, item{Change{Action: action, Scope: scope, Path: display, Digest: d}, File{AbsolutePath: abs, DisplayPath: display, Content: *content}})
		}
	}
	return items
}
