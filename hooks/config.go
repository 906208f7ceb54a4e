package hooks

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/dshsim/dshsim/hooks/jsregex"
	"github.com/dshsim/dshsim/internal/jsjson"
)

// Hook is one runnable command hook of a group.
type Hook struct {
	// Command runs as bash -c <Command> (after substitution).
	Command string
	// TimeoutSec is the per-hook timeout in seconds; nil means the default.
	TimeoutSec *float64
	// Line is the line of the entry in the file.
	Line int
}

// Group is a group with at least one runnable hook.
type Group struct {
	// Matcher is the matcher exactly as configured; nil when the group had
	// none, or a non-string one (both match every tool).
	Matcher *string
	// Hooks run in order.
	Hooks []Hook
	// Line is the line of the group in the file.
	Line int

	match matcher
}

// Config is one parsed config file.
type Config struct {
	// Dialect is the file's dialect.
	Dialect *Dialect
	// Groups are the runnable groups per point, in file order.
	Groups map[Point][]Group
	// Skipped are hooks that never run (a type other than command; Codex:
	// async), in parse order; upstream logs one warning each.
	Skipped []Skipped
	// Notes are things upstream ignores without a word (a non-object root,
	// a malformed entry, a non-string matcher, an unknown event key); they
	// change nothing, they are only reported.
	Notes []string
}

// Skipped is a hook that is recognised but never runs.
type Skipped struct {
	// Point is the event the hook is configured on.
	Point Point
	// Type is the hook's type ("prompt", "agent", ...); "command" when the
	// entry was skipped for being async.
	Type string
	// Async reports a Codex async command hook.
	Async bool
	// Line is the entry's line.
	Line int
}

// Warning is upstream's VERBATIM logger line for the skipped hook.
func (s Skipped) Warning(d *Dialect) string {
	if d.skipsAsync { // Codex wording
		reason := fmt.Sprintf("unsupported %s hook", jsjson.Quote(s.Type))
		if s.Async {
			reason = "async hook"
		}
		return fmt.Sprintf("%s: skipping %s on %s (only sync command hooks run)", d.Plugin, reason, s.Point)
	}
	return fmt.Sprintf("%s: skipping unsupported %s hook on %s (only command hooks run)", d.Plugin, jsjson.Quote(s.Type), s.Point)
}

// ConfigError is a config file that cannot be used: nothing of the bridge runs.
type ConfigError struct {
	// File is the path read; Line and Column locate the problem (0 when it
	// has no position, e.g. a missing file).
	File         string
	Line, Column int
	// Field is the JSON path of the bad value, e.g. hooks.PreToolUse[0].matcher.
	Field string
	// Upstream is String(error) as upstream logs it, e.g.
	// `SyntaxError: invalid claude-code regex matcher "[" on event "PreToolUse"`.
	Upstream string
	// Detail says more than upstream does (which construct, which offset).
	Detail string
	// Missing reports that the file does not exist.
	Missing bool
}

// Error is "<file>:<line>:<column>: <field>: <upstream error> (<detail>)".
func (e *ConfigError) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d:%d", e.Line, e.Column)
	}
	if e.Field != "" {
		b.WriteString(": " + e.Field)
	}
	b.WriteString(": " + e.Upstream)
	if e.Detail != "" {
		b.WriteString(" (" + e.Detail + ")")
	}
	return b.String()
}

// Substitutions are the Claude Code plugin options replaced in commands.
type Substitutions struct {
	// PluginRoot replaces ${CLAUDE_PLUGIN_ROOT} when set.
	PluginRoot *string
	// ProjectDir replaces ${CLAUDE_PROJECT_DIR} when set.
	ProjectDir *string
}

// Parse reads one config file of dialect d. file names it in errors. A
// *ConfigError rejects the whole file (upstream's "no hooks registered").
func Parse(d *Dialect, file string, data []byte, sub Substitutions) (*Config, error) {
	cfg := &Config{Dialect: d, Groups: map[Point][]Group{}}
	root, err := jsjson.Parse(data)
	if err != nil {
		var se *jsjson.SyntaxError
		errors.As(err, &se)
		return nil, &ConfigError{File: file, Line: se.Line, Column: se.Column, Upstream: "SyntaxError: " + se.Problem + " in JSON at position " + fmt.Sprint(se.Offset)}
	}
	p := &configParser{d: d, file: file, data: data, sub: sub, cfg: cfg}
	if root.Kind != jsjson.Object {
		p.note(root, "", "the root is a JSON %s, not an object: no hooks are configured", root.Kind)
		return cfg, nil
	}
	events, prefix := root, ""
	if h := root.Get("hooks"); h != nil && h.Kind == jsjson.Object {
		events, prefix = h, "hooks."
	} else if h != nil {
		p.note(h, "hooks", "is a JSON %s, not an object: the root itself is read as the event map", h.Kind)
	}
	for _, m := range events.Members {
		if k := m.KeyString(); !d.recognises(Point(k)) && (prefix != "" || k != "hooks") {
			p.note(m.Value, prefix+k, "is not an event the %s dialect knows (%s): ignored", d.Name, pointList(d.Points))
		}
	}
	for _, point := range d.Points {
		if err := p.point(point, events.Get(string(point)), prefix+string(point)); err != nil {
			return nil, err
		}
	}
	return cfg, nil
}

func pointList(ps []Point) string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = string(p)
	}
	return strings.Join(s, ", ")
}

type configParser struct {
	d    *Dialect
	file string
	data []byte
	sub  Substitutions
	cfg  *Config
}

func (p *configParser) line(v *jsjson.Value) int {
	l, _ := jsjson.LineOf(p.data, v.Offset)
	return l
}

func (p *configParser) note(v *jsjson.Value, field, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if field != "" {
		msg = field + " " + msg
	}
	p.cfg.Notes = append(p.cfg.Notes, fmt.Sprintf("%s:%d: %s", p.file, p.line(v), msg))
}

func (p *configParser) point(point Point, v *jsjson.Value, field string) error {
	if v == nil {
		return nil
	}
	if v.Kind != jsjson.Array {
		p.note(v, field, "is a JSON %s, not an array of groups: ignored", v.Kind)
		return nil
	}
	for i, g := range v.Elems {
		gf := fmt.Sprintf("%s[%d]", field, i)
		if g.Kind != jsjson.Object {
			p.note(g, gf, "is a JSON %s, not a group object: ignored", g.Kind)
			continue
		}
		list := g.Get("hooks")
		if list == nil || list.Kind != jsjson.Array {
			p.note(g, gf, "has no \"hooks\" array: ignored")
			continue
		}
		group := Group{Line: p.line(g)}
		for j, e := range list.Elems {
			if h, ok := p.entry(point, e, fmt.Sprintf("%s.hooks[%d]", gf, j)); ok {
				group.Hooks = append(group.Hooks, h)
			}
		}
		if len(group.Hooks) == 0 {
			continue // dropped before its matcher is looked at, as upstream does
		}
		if err := p.matcher(point, g.Get("matcher"), gf+".matcher", &group); err != nil {
			return err
		}
		p.cfg.Groups[point] = append(p.cfg.Groups[point], group)
	}
	return nil
}

// entry reads one element of a group's hooks array.
func (p *configParser) entry(point Point, e *jsjson.Value, field string) (Hook, bool) {
	if e.Kind != jsjson.Object {
		p.note(e, field, "is a JSON %s, not a hook object: ignored", e.Kind)
		return Hook{}, false
	}
	typ := "command"
	if t := e.Get("type"); t != nil && t.Kind == jsjson.String {
		typ = t.Str()
	}
	if typ != "command" {
		p.cfg.Skipped = append(p.cfg.Skipped, Skipped{Point: point, Type: typ, Line: p.line(e)})
		return Hook{}, false
	}
	if a := e.Get("async"); p.d.skipsAsync && a != nil && a.Kind == jsjson.Bool && a.Bool {
		p.cfg.Skipped = append(p.cfg.Skipped, Skipped{Point: point, Type: typ, Async: true, Line: p.line(e)})
		return Hook{}, false
	}
	c := e.Get("command")
	if c == nil || c.Kind != jsjson.String {
		p.note(e, field, "has no string \"command\": ignored")
		return Hook{}, false
	}
	h := Hook{Command: c.Str(), Line: p.line(e)}
	if p.d.substitutes {
		if p.sub.PluginRoot != nil {
			h.Command = strings.ReplaceAll(h.Command, "${CLAUDE_PLUGIN_ROOT}", *p.sub.PluginRoot)
		}
		if p.sub.ProjectDir != nil {
			h.Command = strings.ReplaceAll(h.Command, "${CLAUDE_PROJECT_DIR}", *p.sub.ProjectDir)
		}
	}
	t, tf := e.Get("timeout"), field+".timeout"
	if alias := e.Get("timeoutSec"); alias != nil {
		switch {
		case !p.d.timeoutSecAlias:
			p.note(alias, field+".timeoutSec", "is not read by the %s dialect (its key is \"timeout\"): ignored", p.d.Name)
		case t == nil || t.Kind != jsjson.Number:
			t, tf = alias, field+".timeoutSec"
		}
	}
	switch {
	case t == nil:
	case t.Kind == jsjson.Number:
		sec := t.Num
		h.TimeoutSec = &sec
	default:
		p.note(t, tf, "is a JSON %s, not a number of seconds: the default timeout applies", t.Kind)
	}
	return h, true
}

// literalPattern is a Claude Code matcher read as a list of exact names.
var literalPattern = regexp.MustCompile(`^[A-Za-z0-9_|]+$`)

func (p *configParser) matcher(point Point, m *jsjson.Value, field string, g *Group) error {
	if m == nil {
		return nil
	}
	if !point.keepsMatcher() {
		p.note(m, field, "is ignored: %s hooks have no matcher", point)
		return nil
	}
	if m.Kind != jsjson.String {
		p.note(m, field, "is a JSON %s, not a string: the group matches every tool", m.Kind)
		return nil
	}
	line, col := jsjson.LineOf(p.data, m.Offset)
	fail := func(upstream, detail string) error {
		return &ConfigError{File: p.file, Line: line, Column: col, Field: field, Upstream: upstream, Detail: detail}
	}
	pattern := m.Str()
	if m.HasLoneSurrogate() {
		return fail(fmt.Sprintf("Error: unsupported %s regex matcher %s on event %s", p.d.Name, jsjson.QuoteUnits(m.Units), jsjson.Quote(string(point))),
			"a lone surrogate escape in a matcher is not supported here")
	}
	mt, err := compileMatcher(p.d, pattern)
	var se *jsregex.SyntaxError
	var ue *jsregex.UnsupportedError
	switch {
	case errors.As(err, &se):
		return fail(fmt.Sprintf("SyntaxError: invalid %s regex matcher %s on event %s", p.d.Name, jsjson.Quote(pattern), jsjson.Quote(string(point))),
			fmt.Sprintf("JavaScript: %s at offset %d", se.Problem, se.Offset))
	case errors.As(err, &ue):
		return fail(fmt.Sprintf("Error: unsupported %s regex matcher %s on event %s", p.d.Name, jsjson.Quote(pattern), jsjson.Quote(string(point))),
			fmt.Sprintf("%s at offset %d is valid JavaScript that Go's regexp cannot run; refused rather than matched differently", ue.Feature, ue.Offset))
	case err != nil:
		return fail("Error: "+err.Error(), "")
	}
	g.Matcher, g.match = &pattern, mt
	return nil
}

// matcher decides which tool names a group applies to.
type matcher struct {
	literals []string // exact names (Claude Code literal form)
	re       *jsregex.Regexp
}

// compileMatcher builds a matcher: "" and "*" match everything; a Claude
// Code pattern of [A-Za-z0-9_|]+ is a list of exact names; anything else
// is a JavaScript regular expression tested anywhere in the name.
func compileMatcher(d *Dialect, pattern string) (matcher, error) {
	switch {
	case pattern == "" || pattern == "*":
		return matcher{}, nil
	case d.literalMatchers && literalPattern.MatchString(pattern):
		return matcher{literals: strings.Split(pattern, "|")}, nil
	}
	re, err := jsregex.Compile(pattern)
	if err != nil {
		return matcher{}, err
	}
	return matcher{re: re}, nil
}

// matches reports whether the group applies to the tool named name.
func (m matcher) matches(name string) bool {
	switch {
	case m.re != nil:
		return m.re.Test(name)
	case m.literals != nil:
		for _, l := range m.literals {
			if l == name {
				return true
			}
		}
		return false
	}
	return true
}
