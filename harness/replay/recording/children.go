package recording

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/dshsim/dshsim/pipeline/session"
)

// Child is one child session of a recording: session.<n>.jsonl (n = 1, 2,
// ... in header createdAt order, as upstream's harness harvests them), its
// script and its own sidecars.
type Child struct {
	// Index is n; File is session.<n>.jsonl.
	Index int
	File  string
	// Header and Events are the child's log, packed rows expanded.
	Header Header
	Events []Event
	// Script are its model replies: the chunks at or after seedLength (a
	// fork's copied prefix is its parent's, not its own).
	Script *Script
	// ToolSchemas is the child's tool-schemas sidecar (n in place of the
	// session's name), nil when absent; SystemPrompt the paragraphs of its
	// system-prompt sidecar.
	ToolSchemas  *ToolSchemas
	SystemPrompt []string
	// ScriptOnly marks a child fixture of a front end beyond ACP: a log of
	// the child's model chunks alone, no origin (llm-replay's child files,
	// DSH_SNAPSHOT_CHILD_FILES, which upstream's suite gives a run whose
	// children it does not compare). Its script serves the children in
	// their creation order; it is compared with nothing.
	ScriptOnly bool
}

// ChildFile is the file name of child n's log.
func ChildFile(n int) string { return "session." + strconv.Itoa(n) + ".jsonl" }

// ChildSidecar is the name of child n's sidecar of kind name (e.g.
// tool-schemas.expected.json becomes tool-schemas.<n>.expected.json).
func ChildSidecar(name string, n int) string {
	base, rest, _ := strings.Cut(name, ".")
	return base + "." + strconv.Itoa(n) + "." + rest
}

var childFileRE = regexp.MustCompile(`^session\.([0-9]+)\.jsonl$`)

// FirstPrompt is the text of the first user message the child's own part of
// its log inserts (its task), "" when it has none.
func (c *Child) FirstPrompt() string {
	for _, e := range c.Events {
		if e.Seq < int64(c.Header.SeedLength) || e.Type != session.KindUserMessage {
			continue
		}
		var d userMessageData
		if err := json.Unmarshal(e.Data, &d); err == nil && d.Source != nil && d.Source.Kind == "user" && d.Content != nil {
			var b strings.Builder
			for _, bl := range *d.Content {
				b.WriteString(bl.Text)
			}
			return b.String()
		}
	}
	return ""
}

// loadChildren reads every session.<n>.jsonl of dir: numbered 1..N without
// a gap, each a child of a session of the recording (its parentSession the
// primary's or an earlier child's id), with origin "subagent".
func (l *loader) loadChildren(r *Recording) error {
	matches, _ := filepath.Glob(filepath.Join(l.dir, "session.*.jsonl"))
	var ns []int
	for _, m := range matches {
		if r.Frontend != ACP && filepath.Base(m) == SessionExpectedFile {
			continue // a front end's expected log, not a child's
		}
		sub := childFileRE.FindStringSubmatch(filepath.Base(m))
		if sub == nil {
			return l.fail(filepath.Base(m), 0, "", "not a child log name (want session.<n>.jsonl, n = 1, 2, ...)")
		}
		n, err := strconv.Atoi(sub[1])
		if err != nil || n < 1 || sub[1] != strconv.Itoa(n) {
			return l.fail(filepath.Base(m), 0, "", "not a child log name (want session.<n>.jsonl, n = 1, 2, ...)")
		}
		ns = append(ns, n)
	}
	sort.Ints(ns)
	known := map[string]bool{r.Header.ID: true}
	for i, n := range ns {
		if n != i+1 {
			return l.fail(ChildFile(i+1), 0, "", "missing: child logs are numbered 1..%d without a gap (found %s)", len(ns), ChildFile(n))
		}
		c, err := l.loadChild(n)
		if err != nil {
			return err
		}
		c.ScriptOnly = r.Frontend != ACP && c.Header.Origin == "" && chunksOnly(c.Events)
		switch {
		case c.Header.Origin != "subagent" && !c.ScriptOnly:
			return l.fail(c.File, 1, "origin", "want \"subagent\", got %q", c.Header.Origin)
		case !known[c.Header.ParentSession]:
			return l.fail(c.File, 1, "parentSession", "%q is neither %s's id nor an earlier child's", c.Header.ParentSession, SessionFile)
		}
		known[c.Header.ID] = true
		r.Children = append(r.Children, c)
	}
	return nil
}

// ComparedChildren are the children whose logs are compared: all but the
// script-only ones, in order.
func (r *Recording) ComparedChildren() []*Child {
	var out []*Child
	for _, c := range r.Children {
		if !c.ScriptOnly {
			out = append(out, c)
		}
	}
	return out
}

// chunksOnly reports a log of model chunks alone (at least one).
func chunksOnly(evs []Event) bool {
	for _, e := range evs {
		if e.Type != session.KindAssistantChunk {
			return false
		}
	}
	return len(evs) > 0
}

// loadChild reads child n: its log, its script and its sidecars.
func (l *loader) loadChild(n int) (*Child, error) { return l.loadChildFile(n, ChildFile(n)) }

// loadChildFile reads child n from file.
func (l *loader) loadChildFile(n int, file string) (*Child, error) {
	c := &Child{Index: n, File: file}
	var err error
	if c.Header, c.Events, err = l.session(c.File); err != nil {
		return nil, err
	}
	var own []Event
	for _, e := range c.Events {
		if e.Seq >= int64(c.Header.SeedLength) {
			own = append(own, e)
		}
	}
	if c.Script, err = deriveEvents(l.name, own); err != nil {
		return nil, retarget(err, c.File)
	}
	if data, found, err := l.readOptional(ChildSidecar(ToolSchemasFile, n)); err != nil {
		return nil, err
	} else if found {
		if c.ToolSchemas, err = parseToolSchemas(l.name, data); err != nil {
			return nil, retarget(err, ChildSidecar(ToolSchemasFile, n))
		}
	}
	if data, found, err := l.readOptional(ChildSidecar(SystemPromptFile, n)); err != nil {
		return nil, err
	} else if found {
		c.SystemPrompt = Paragraphs(string(data))
	}
	return c, nil
}

// retarget names file in an error the session parser raised against
// session.jsonl.
func retarget(err error, file string) error {
	var e *Error
	if errors.As(err, &e) {
		c := *e
		c.File = file
		return &c
	}
	return fmt.Errorf("%s: %w", file, err)
}
