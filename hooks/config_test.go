package hooks

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func strp(s string) *string   { return &s }
func f64p(f float64) *float64 { return &f }
func intp(i int) *int         { return &i }
func parse(t *testing.T, d *Dialect, src string, sub Substitutions) *Config {
	t.Helper()
	cfg, err := Parse(d, "hooks.json", []byte(src), sub)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return cfg
}

// summarise renders the parsed groups compactly: point, matcher, commands
// and timeouts, in order.
func summarise(cfg *Config) []string {
	var out []string
	for _, p := range cfg.Dialect.Points {
		for _, g := range cfg.Groups[p] {
			m := "<none>"
			if g.Matcher != nil {
				m = *g.Matcher
			}
			for _, h := range g.Hooks {
				to := "-"
				if h.TimeoutSec != nil {
					to = trimFloat(*h.TimeoutSec)
				}
				out = append(out, string(p)+" "+m+" "+h.Command+" "+to)
			}
		}
	}
	return out
}

func TestParseRules(t *testing.T) {
	tests := []struct {
		name    string
		d       *Dialect
		src     string
		sub     Substitutions
		want    []string
		skipped []string
		notes   int
	}{
		{"hooks object", ClaudeCode, `{"hooks":{"PreToolUse":[{"matcher":"bash","hooks":[{"type":"command","command":"a"}]}]}}`, Substitutions{}, []string{"PreToolUse bash a -"}, nil, 0},
		{"bare map is the same", ClaudeCode, `{"PreToolUse":[{"matcher":"bash","hooks":[{"type":"command","command":"a"}]}]}`, Substitutions{}, []string{"PreToolUse bash a -"}, nil, 0},
		{"settings file with other keys", Codex, `{"model":"x","hooks":{"PostToolUse":[{"hooks":[{"command":"a"}]}]}}`, Substitutions{}, []string{"PostToolUse <none> a -"}, nil, 0},
		{"hooks not an object: the root is the map", ClaudeCode, `{"hooks":[],"PreToolUse":[{"hooks":[{"command":"a"}]}]}`, Substitutions{}, []string{"PreToolUse <none> a -"}, nil, 1},
		{"non-object root is empty", ClaudeCode, `[{"PreToolUse":[]}]`, Substitutions{}, nil, nil, 1},
		{"null root is empty", Codex, `null`, Substitutions{}, nil, nil, 1},
		{"absent type is command", Codex, `{"PreToolUse":[{"hooks":[{"command":"a"}]}]}`, Substitutions{}, []string{"PreToolUse <none> a -"}, nil, 0},
		{"non-string type is command", ClaudeCode, `{"PreToolUse":[{"hooks":[{"type":5,"command":"a"}]}]}`, Substitutions{}, []string{"PreToolUse <none> a -"}, nil, 0},
		{"claude-code skips other types with its wording", ClaudeCode,
			`{"PreToolUse":[{"hooks":[{"type":"prompt","command":"a"},{"type":"command","command":"b"}]}],"Stop":[{"hooks":[{"type":"agent"}]}]}`, Substitutions{},
			[]string{"PreToolUse <none> b -"},
			[]string{`hooks-claude-code: skipping unsupported "prompt" hook on PreToolUse (only command hooks run)`, `hooks-claude-code: skipping unsupported "agent" hook on Stop (only command hooks run)`}, 0},
		{"codex skips other types and async, with its wording", Codex,
			`{"PreToolUse":[{"hooks":[{"type":"http","command":"a"},{"command":"b","async":true},{"command":"c","async":"yes"}]}]}`, Substitutions{},
			[]string{"PreToolUse <none> c -"},
			[]string{`hooks-codex: skipping unsupported "http" hook on PreToolUse (only sync command hooks run)`, `hooks-codex: skipping async hook on PreToolUse (only sync command hooks run)`}, 0},
		{"claude-code runs async hooks synchronously", ClaudeCode, `{"PreToolUse":[{"hooks":[{"command":"b","async":true}]}]}`, Substitutions{}, []string{"PreToolUse <none> b -"}, nil, 0},
		{"codex checks the type before async", Codex, `{"PreToolUse":[{"hooks":[{"type":"agent","async":true}]}]}`, Substitutions{}, nil,
			[]string{`hooks-codex: skipping unsupported "agent" hook on PreToolUse (only sync command hooks run)`}, 0},
		{"malformed entries are dropped", ClaudeCode, `{"PreToolUse":[{"hooks":[1,"x",{"command":5},{"command":"ok"}]},{"matcher":"x"},{"hooks":{}},7]}`, Substitutions{}, []string{"PreToolUse <none> ok -"}, nil, 6},
		{"a point that is not an array is ignored", ClaudeCode, `{"PreToolUse":{"hooks":[{"command":"a"}]}}`, Substitutions{}, nil, nil, 1},
		{"timeout is seconds, fractions kept", ClaudeCode, `{"PreToolUse":[{"hooks":[{"command":"a","timeout":0.5},{"command":"b","timeout":30}]}]}`, Substitutions{}, []string{"PreToolUse <none> a 0.5", "PreToolUse <none> b 30"}, nil, 0},
		{"string timeout means the default", ClaudeCode, `{"PreToolUse":[{"hooks":[{"command":"a","timeout":"5"}]}]}`, Substitutions{}, []string{"PreToolUse <none> a -"}, nil, 1},
		{"codex timeoutSec alias", Codex, `{"PreToolUse":[{"hooks":[{"command":"a","timeoutSec":7}]}]}`, Substitutions{}, []string{"PreToolUse <none> a 7"}, nil, 0},
		{"codex timeout wins over timeoutSec", Codex, `{"PreToolUse":[{"hooks":[{"command":"a","timeout":3,"timeoutSec":7}]}]}`, Substitutions{}, []string{"PreToolUse <none> a 3"}, nil, 0},
		{"codex timeoutSec when timeout is not a number", Codex, `{"PreToolUse":[{"hooks":[{"command":"a","timeout":"3","timeoutSec":7}]}]}`, Substitutions{}, []string{"PreToolUse <none> a 7"}, nil, 0},
		{"claude-code ignores timeoutSec", ClaudeCode, `{"PreToolUse":[{"hooks":[{"command":"a","timeoutSec":7}]}]}`, Substitutions{}, []string{"PreToolUse <none> a -"}, nil, 1},
		{"zero and negative timeouts are kept (they fail at run)", Codex, `{"PreToolUse":[{"hooks":[{"command":"a","timeout":0},{"command":"b","timeout":-1}]}]}`, Substitutions{}, []string{"PreToolUse <none> a 0", "PreToolUse <none> b -1"}, nil, 0},
		{"claude-code substitutes configured roots everywhere", ClaudeCode, `{"PreToolUse":[{"hooks":[{"command":"${CLAUDE_PLUGIN_ROOT}/x ${CLAUDE_PLUGIN_ROOT} ${CLAUDE_PROJECT_DIR}"}]}]}`,
			Substitutions{PluginRoot: strp("/p"), ProjectDir: strp("/q")}, []string{"PreToolUse <none> /p/x /p /q -"}, nil, 0},
		{"claude-code substitutes only what is configured", ClaudeCode, `{"PreToolUse":[{"hooks":[{"command":"${CLAUDE_PLUGIN_ROOT} ${CLAUDE_PROJECT_DIR}"}]}]}`,
			Substitutions{ProjectDir: strp("/q")}, []string{"PreToolUse <none> ${CLAUDE_PLUGIN_ROOT} /q -"}, nil, 0},
		{"codex never substitutes", Codex, `{"PreToolUse":[{"hooks":[{"command":"${CLAUDE_PLUGIN_ROOT}"}]}]}`,
			Substitutions{PluginRoot: strp("/p")}, []string{"PreToolUse <none> ${CLAUDE_PLUGIN_ROOT} -"}, nil, 0},
		{"non-string matcher matches everything", ClaudeCode, `{"PreToolUse":[{"matcher":5,"hooks":[{"command":"a"}]},{"matcher":["bash"],"hooks":[{"command":"b"}]}]}`, Substitutions{}, []string{"PreToolUse <none> a -", "PreToolUse <none> b -"}, nil, 2},
		{"empty and star matchers are kept as written", Codex, `{"PreToolUse":[{"matcher":"","hooks":[{"command":"a"}]},{"matcher":"*","hooks":[{"command":"b"}]}]}`, Substitutions{}, []string{"PreToolUse  a -", "PreToolUse * b -"}, nil, 0},
		{"UserPromptSubmit and Stop discard the matcher, even an invalid one", ClaudeCode, `{"UserPromptSubmit":[{"matcher":"[","hooks":[{"command":"a"}]}],"Stop":[{"matcher":"bash","hooks":[{"command":"b"}]}]}`, Substitutions{}, []string{"UserPromptSubmit <none> a -", "Stop <none> b -"}, nil, 2},
		{"invalid matcher on an unknown event is ignored", ClaudeCode, `{"Setup":[{"matcher":"[","hooks":[{"command":"a"}]}]}`, Substitutions{}, nil, nil, 1},
		{"invalid matcher on a group without runnable hooks is ignored", ClaudeCode, `{"PreToolUse":[{"matcher":"[","hooks":[{"type":"prompt"}]}]}`, Substitutions{}, nil,
			[]string{`hooks-claude-code: skipping unsupported "prompt" hook on PreToolUse (only command hooks run)`}, 0},
		{"codex does not know the Subagent events", Codex, `{"SubagentStop":[{"hooks":[{"command":"a"}]}],"Notification":[{"hooks":[{"command":"b"}]}]}`, Substitutions{}, nil, nil, 2},
		{"claude-code knows SubagentStop", ClaudeCode, `{"SubagentStop":[{"hooks":[{"command":"a"}]}]}`, Substitutions{}, []string{"SubagentStop <none> a -"}, nil, 0},
		{"duplicate keys: the last wins", ClaudeCode, `{"PreToolUse":[{"hooks":[{"command":"first"}]}],"PreToolUse":[{"hooks":[{"command":"second"}]}]}`, Substitutions{}, []string{"PreToolUse <none> second -"}, nil, 0},
		{"a misspelt event key is reported", ClaudeCode, `{"preToolUse":[{"hooks":[{"command":"a"}]}]}`, Substitutions{}, nil, nil, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := parse(t, tt.d, tt.src, tt.sub)
			if diff := cmp.Diff(tt.want, summarise(cfg)); diff != "" {
				t.Errorf("groups (-want +got):\n%s", diff)
			}
			var skipped []string
			for _, s := range cfg.Skipped {
				skipped = append(skipped, s.Warning(tt.d))
			}
			if diff := cmp.Diff(tt.skipped, skipped); diff != "" {
				t.Errorf("skip warnings (-want +got):\n%s", diff)
			}
			if len(cfg.Notes) != tt.notes {
				t.Errorf("notes = %d, want %d: %q", len(cfg.Notes), tt.notes, cfg.Notes)
			}
		})
	}
}

func TestParseRejects(t *testing.T) {
	tests := []struct {
		name                 string
		d                    *Dialect
		src, upstream, field string
		line                 int
	}{
		{"claude-code invalid matcher", ClaudeCode, "{\"hooks\":{\n\"PreToolUse\":[{\"matcher\":\"(\",\"hooks\":[{\"command\":\"a\"}]}]}}",
			`SyntaxError: invalid claude-code regex matcher "(" on event "PreToolUse"`, "hooks.PreToolUse[0].matcher", 2},
		{"codex invalid matcher", Codex, `{"PostToolUse":[{"matcher":"ok","hooks":[{"command":"a"}]},{"matcher":"[","hooks":[{"command":"a"}]}]}`,
			`SyntaxError: invalid codex regex matcher "[" on event "PostToolUse"`, "PostToolUse[1].matcher", 1},
		{"glob-like pattern", ClaudeCode, `{"PreToolUse":[{"matcher":"*bash","hooks":[{"command":"a"}]}]}`,
			`SyntaxError: invalid claude-code regex matcher "*bash" on event "PreToolUse"`, "PreToolUse[0].matcher", 1},
		{"RE2-only flag syntax", Codex, `{"PreToolUse":[{"matcher":"(?i)bash","hooks":[{"command":"a"}]}]}`,
			`SyntaxError: invalid codex regex matcher "(?i)bash" on event "PreToolUse"`, "PreToolUse[0].matcher", 1},
		{"JSON quoting of the pattern", ClaudeCode, `{"PreToolUse":[{"matcher":"\"[\\\\","hooks":[{"command":"a"}]}]}`,
			`SyntaxError: invalid claude-code regex matcher "\"[\\\\" on event "PreToolUse"`, "PreToolUse[0].matcher", 1},
		{"claude-code checks SessionStart first", ClaudeCode, `{"PreToolUse":[{"matcher":"(","hooks":[{"command":"a"}]}],"SessionStart":[{"matcher":"[","hooks":[{"command":"a"}]}]}`,
			`SyntaxError: invalid claude-code regex matcher "[" on event "SessionStart"`, "SessionStart[0].matcher", 1},
		{"codex checks PreToolUse first", Codex, `{"PreToolUse":[{"matcher":"(","hooks":[{"command":"a"}]}],"SessionStart":[{"matcher":"[","hooks":[{"command":"a"}]}]}`,
			`SyntaxError: invalid codex regex matcher "(" on event "PreToolUse"`, "PreToolUse[0].matcher", 1},
		{"lookahead is unsupported", ClaudeCode, `{"PreToolUse":[{"matcher":"(?=bash)","hooks":[{"command":"a"}]}]}`,
			`Error: unsupported claude-code regex matcher "(?=bash)" on event "PreToolUse"`, "PreToolUse[0].matcher", 1},
		{"backreference is unsupported", Codex, `{"PreToolUse":[{"matcher":"(a)\\1","hooks":[{"command":"a"}]}]}`,
			`Error: unsupported codex regex matcher "(a)\\1" on event "PreToolUse"`, "PreToolUse[0].matcher", 1},
		{"a lone surrogate is unsupported", Codex, `{"PreToolUse":[{"matcher":"\ud800","hooks":[{"command":"a"}]}]}`,
			`Error: unsupported codex regex matcher "\ud800" on event "PreToolUse"`, "PreToolUse[0].matcher", 1},
		{"invalid JSON", ClaudeCode, "{\n  \"PreToolUse\": [,]\n}", "SyntaxError: unexpected token ',' in JSON at position 19", "", 2},
		{"byte order mark", ClaudeCode, "\ufeff{}", `SyntaxError: unexpected token '\ufeff' in JSON at position 0`, "", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse(tt.d, "hooks.json", []byte(tt.src), Substitutions{})
			var ce *ConfigError
			if !errors.As(err, &ce) {
				t.Fatalf("want a ConfigError, got %v", err)
			}
			if ce.Upstream != tt.upstream || ce.Field != tt.field || ce.Line != tt.line {
				t.Errorf("got upstream %q field %q line %d\nwant        %q field %q line %d", ce.Upstream, ce.Field, ce.Line, tt.upstream, tt.field, tt.line)
			}
			if !strings.HasPrefix(ce.Error(), "hooks.json:") {
				t.Errorf("Error() must start with the file: %s", ce)
			}
		})
	}
}

// The matcher semantics of both dialects, as upstream's.
func TestMatchers(t *testing.T) {
	tests := []struct {
		d       *Dialect
		pattern string
		name    string
		want    bool
	}{
		{ClaudeCode, "", "anything", true},
		{ClaudeCode, "*", "anything", true},
		{Codex, "*", "anything", true},
		{ClaudeCode, "bash", "bash", true},
		{ClaudeCode, "bash", "xbash", false},
		{ClaudeCode, "Bash", "BashOutput", false},
		{ClaudeCode, "Bash", "bash", false},
		{ClaudeCode, "Edit|Write", "Edit", true},
		{ClaudeCode, "Edit|Write", "Write", true},
		{ClaudeCode, "Edit|Write", "EditFile", false},
		{ClaudeCode, "^Bash$", "Bash", true},
		{ClaudeCode, "^Bash$", "BashOutput", false},
		{ClaudeCode, "Bash.*", "BashOutput", true},
		{ClaudeCode, `.*\.ts$`, "a.ts", true},
		{ClaudeCode, `.*\.ts$`, "a.tsx", false},
		{ClaudeCode, "mcp__.*", "mcp__srv__tool", true},
		{Codex, "bash", "bash", true},
		{Codex, "bash", "xbash", true},
		{Codex, "bash", "bash_output", true},
		{Codex, "Bash", "BashOutput", true},
		{Codex, "Bash", "bash", false},
		{Codex, "^bash$", "bash_output", false},
		{Codex, "Edit|Write", "EditFile", true},
		{Codex, `\z`, "z", true},           // JavaScript: an identity escape, not an anchor
		{Codex, `\p{L}`, "p{L}", true},     // no u flag: a literal
		{Codex, `\p{L}`, "A", false},       // not a Unicode property
		{Codex, `[[:alpha:]]`, "a]", true}, // a class of "[:alph" then "]"
		{Codex, `[[:alpha:]]`, "b", false}, // not a POSIX class
		{Codex, `\s`, "\v", true},          // JavaScript's \s includes \v (RE2's does not)
		{Codex, `bash$`, "bash\n", false},  // $ is the end of input only
		{ClaudeCode, `job_(kill|list)`, "job_list", true},
	}
	for _, tt := range tests {
		m, err := compileMatcher(tt.d, tt.pattern)
		if err != nil {
			t.Errorf("%s %q: %v", tt.d.Name, tt.pattern, err)
			continue
		}
		if got := m.matches(tt.name); got != tt.want {
			t.Errorf("%s matcher %q on %q = %v, want %v", tt.d.Name, tt.pattern, tt.name, got, tt.want)
		}
	}
}

func negZero() float64 { return math.Copysign(0, -1) }
func inf() float64     { return math.Inf(1) }

// Parse never panics: a config file is user input.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		`{"hooks":{"PreToolUse":[{"matcher":"bash","hooks":[{"type":"command","command":"exit 2","timeout":1}]}]}}`,
		`{"PostToolUse":[{"matcher":"(?=a)","hooks":[{"command":"x","async":true,"timeoutSec":"3"}]}],"Stop":[{"matcher":"[","hooks":[{}]}]}`,
		`[1,2]`, `{"hooks":5}`, "\ufeff{}",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		for _, d := range Dialects {
			cfg, err := Parse(d, "hooks.json", []byte(src), Substitutions{PluginRoot: strp("/p")})
			if err != nil {
				var ce *ConfigError
				if !errors.As(err, &ce) || ce.Upstream == "" {
					t.Fatalf("%s: error %v is not a ConfigError with upstream's text", d.Name, err)
				}
				continue
			}
			for _, gs := range cfg.Groups {
				for _, g := range gs {
					if len(g.Hooks) == 0 {
						t.Fatalf("%s: a group without runnable hooks survived", d.Name)
					}
					g.match.matches("bash")
				}
			}
		}
	})
}
