package hooks

// Point is a hook point (an event key of the config file).
type Point string

// The hook points both dialects recognise. PreToolUse and PostToolUse run
// around tool calls, UserPromptSubmit and Stop around the agent's turns; the
// others are loaded, validated and reported (see the package documentation).
const (
	PreToolUse       Point = "PreToolUse"
	PostToolUse      Point = "PostToolUse"
	UserPromptSubmit Point = "UserPromptSubmit"
	Stop             Point = "Stop"
	SessionStart     Point = "SessionStart"
	SubagentStart    Point = "SubagentStart"
	SubagentStop     Point = "SubagentStop"
)

// turnScoped reports a point whose Codex payload carries turn_id.
func (p Point) turnScoped() bool {
	return p == PreToolUse || p == PostToolUse || p == UserPromptSubmit || p == Stop
}

// plainContext reports a point where a Codex hook's clean plain stdout is
// context (upstream's plainStdoutAsContext).
func (p Point) plainContext() bool { return p == UserPromptSubmit || p == SessionStart }

// strictBlocks reports whether the strict switch turns a hook of p that
// could not run into a block: every point but Stop, where a block would
// force another step (and a hook that never runs would force one forever),
// while letting the turn end is the side that runs nothing more.
func (p Point) strictBlocks() bool { return p != Stop }

// keepsMatcher reports whether a group's matcher means anything at p
// (UserPromptSubmit and Stop discard it whatever it is).
func (p Point) keepsMatcher() bool { return p != UserPromptSubmit && p != Stop }

// Dialect is one of the two config dialects. Every difference between them
// is a field here, so the rest of the package is one code path.
type Dialect struct {
	// Name is the VERBATIM dialect stamp of hook/invoked and handler ids.
	Name string
	// Plugin is the VERBATIM plugin name: the prefix of every logger line and
	// the source of context messages.
	Plugin string
	// File is the config file name the acp-agent loads from the launch cwd.
	File string
	// Points are the event keys read, in the order they are visited.
	Points []Point

	// literalMatchers: a pattern of [A-Za-z0-9_|]+ is a list of exact names
	// (Claude Code); otherwise every pattern is a regular expression (Codex).
	literalMatchers bool
	// skipsAsync: an entry with "async": true is skipped (Codex); Claude Code
	// ignores the flag and runs the hook synchronously.
	skipsAsync bool
	// timeoutSecAlias: "timeoutSec" is read when "timeout" is not a number (Codex).
	timeoutSecAlias bool
	// substitutes: ${CLAUDE_PLUGIN_ROOT} and ${CLAUDE_PROJECT_DIR} (Claude Code).
	substitutes bool
	// stdinNewline: the payload is followed by "\n" (Claude Code).
	stdinNewline bool
	// asks: a merged ask becomes the pipeline's ask (Claude Code); Codex
	// delegates to the next listener, so its ask is effectively an allow.
	asks bool
	// projectDirEnv: CLAUDE_PROJECT_DIR is set in the hook's environment (Claude Code).
	projectDirEnv bool
	// warnsUpdatedInput: a requested updatedInput is logged (Claude Code; Codex is silent).
	warnsUpdatedInput bool
	// plainStdoutContext: a UserPromptSubmit or SessionStart hook's plain
	// stdout (exit 0, not JSON) is additional context (Codex).
	plainStdoutContext bool
	// payload is the stdin payload's shape.
	payload payloadShape
}

// ClaudeCode is the Claude Code dialect (hooks.json).
var ClaudeCode = &Dialect{
	Name: "claude-code", Plugin: "hooks-claude-code", File: "hooks.json",
	Points:          []Point{SessionStart, UserPromptSubmit, PreToolUse, PostToolUse, Stop, SubagentStart, SubagentStop},
	literalMatchers: true, substitutes: true, stdinNewline: true, asks: true, projectDirEnv: true, warnsUpdatedInput: true,
	payload: claudeCodePayload,
}

// Codex is the Codex dialect (codex-hooks.json).
var Codex = &Dialect{
	Name: "codex", Plugin: "hooks-codex", File: "codex-hooks.json",
	Points:     []Point{PreToolUse, PostToolUse, SessionStart, UserPromptSubmit, Stop},
	skipsAsync: true, timeoutSecAlias: true, plainStdoutContext: true,
	payload: codexPayload,
}

// Dialects are both dialects in upstream's registration order: Claude Code
// first, so its listeners are the outer ones.
var Dialects = []*Dialect{ClaudeCode, Codex}

// recognises reports whether p is an event key of the dialect.
func (d *Dialect) recognises(p Point) bool {
	for _, q := range d.Points {
		if q == p {
			return true
		}
	}
	return false
}
