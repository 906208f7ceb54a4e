package diff

import (
	"encoding/json"

	"github.com/dshsim/dshsim/harness/oracle"
	"github.com/dshsim/dshsim/harness/replay/recording"
)

// setupConfined runs the case under workspace-write or read-only: approval
// prompts are asked and answered from the generated answers.
func setupConfined(g *gen) {
	g.set.Mode = pick(g, oracle.WorkspaceWrite, oracle.ReadOnly)
}

// wider is an escalation target strictly wider than the case's mode
// (escalating to the current mode is a named departure, not explored).
func (g *gen) wider() string {
	if g.set.Mode == oracle.ReadOnly {
		return pick(g, oracle.WorkspaceWrite, oracle.DangerFullAccess)
	}
	return oracle.DangerFullAccess
}

// answer queues the user's answer to the next approval prompt; sometimes
// none, so that a prompt meets an empty queue (cancelled).
func (g *gen) answer() {
	if g.chance(0.15) {
		return
	}
	g.answers = append(g.answers, recording.Answer{Kind: pick(g, "allow_once", "allow_once", "reject_once")})
	g.mark(AreaApproval)
}

// outside is a path outside the workspace: in /tmp, which each run has
// privately (upstream's isolated child, our replay's namespace).
func (g *gen) outside() string {
	return pick(g, "/tmp/dshgen-out.txt", "../dshgen-up.txt", "/tmp/dshgen-dir/f.txt")
}

// moveEscalateWrite: a write the sandbox denies, retried with an
// escalation (or with a malformed one).
func moveEscalateWrite(g *gen) {
	path := g.outside()
	if g.set.Mode == oracle.ReadOnly && g.chance(0.5) {
		path = "inside.txt"
	}
	g.call("write", o("file_path", path, "content", "escalated\n"), AreaEscalation)
	args := o("file_path", path, "content", "escalated\n")
	switch g.r.IntN(5) {
	case 0:
		args = append(args, kv{"sandbox_permissions", g.wider()})
	case 1:
		args = append(args, kv{"justification", "needs it"})
	case 2:
		args = append(args, kv{"sandbox_permissions", pick(g, "root", "", "full")}, kv{"justification", "bad mode"})
	default:
		args = append(args, kv{"sandbox_permissions", g.wider()}, kv{"justification", pick(g, "the user asked for it", "", "   ")})
		g.answer()
	}
	g.call("write", args, AreaEscalation)
}

// moveEscalateBash: a bash call with an escalation (bash is not confined
// by the oracle's passthrough runner, so its commands only read or write
// what both sandboxes allow).
func moveEscalateBash(g *gen) {
	cmd := pick(g, "echo escalated", "cat /tmp/dshgen-out.txt", "ls sub")
	args := o("command", cmd, "description", "Escalated")
	switch g.r.IntN(4) {
	case 0:
		args = append(args, kv{"justification", "only a justification"})
	case 1:
		args = append(args, kv{"sandbox_permissions", g.wider()})
	default:
		args = append(args, kv{"sandbox_permissions", g.wider()}, kv{"justification", "needs more access"})
		g.answer()
	}
	g.call("bash", args, AreaEscalation)
}

// moveEscalateEdit: an edit outside (or, read-only, inside) with an escalation.
func moveEscalateEdit(g *gen) {
	name := pick(g, g.readable...)
	g.call("read", o("file_path", name), AreaRead)
	args := o("file_path", name, "old_string", pick(g, "alpha", "in sub", "nothing"), "new_string", "EDITED")
	if g.chance(0.7) {
		args = append(args, kv{"sandbox_permissions", g.wider()}, kv{"justification", "edit it"})
		g.answer()
	}
	g.call("edit", args, AreaEscalation, AreaEdit)
}

// moveConfinedWrite: a plain write inside the workspace under the mode.
func moveConfinedWrite(g *gen) {
	g.call("write", o("file_path", pick(g, "plain.txt", "sub/plain.txt"), "content", "plain\n"), AreaWrite)
}

// hookCommands are hook commands of both dialects: exit codes, stderr,
// JSON decisions, contexts, malformed output, a hook over its timeout.
var hookCommands = []string{
	"exit 0",
	"echo plain stdout",
	"echo soft failure >&2; exit 1",
	"echo blocked by hook >&2; exit 2",
	"exit 2",
	"exit 3",
	`printf '%s' '{"decision":"block","reason":"hook blocks"}'`,
	`printf '%s' '{"decision":"block"}'`,
	`printf '%s' '{"decision":"approve","reason":"hook approves"}'`,
	`printf '%s' '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"hook denies"}}'`,
	`printf '%s' '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow"}}'`,
	`printf '%s' '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"ask","permissionDecisionReason":"hook asks"}}'`,
	`printf '%s' '{"hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"HOOK_CONTEXT"}}'`,
	`printf '%s' '{"continue":false,"stopReason":"stop"}'`,
	`printf '%s' '{not json'`,
	"printf '\\n\\n'",
}

// hookMatchers are matchers of both dialects: names, alternations,
// anchors, a wildcard, a case that differs, an invalid pattern.
var hookMatchers = []string{"bash", "read", "write", "edit", "^(read|write)$", "*", "", "job_list", "Bash", "[", "read|bash", ".*"}

// hookEntry is one matcher with its commands.
type hookEntry struct {
	Matcher string     `json:"matcher"`
	Hooks   []hookSpec `json:"hooks"`
}

type hookSpec struct {
	Type    string `json:"type"`
	Command string `json:"command"`
	Timeout int    `json:"timeout,omitempty"`
}

// hookFiles are the hook configs a case seeds: Claude Code's, Codex's or
// both.
func (g *gen) hookFiles() []string {
	files := []string{"hooks.json", "codex-hooks.json"}
	switch g.r.IntN(3) {
	case 0:
		return files[:1]
	case 1:
		return files[1:]
	}
	return files
}

// setupHooks seeds hooks.json (Claude Code) and/or codex-hooks.json
// (Codex) with one or two entries per event.
func setupHooks(g *gen) {
	g.hooks = true
	if g.chance(0.3) {
		g.set.Mode = oracle.WorkspaceWrite // a hook's ask then prompts the user
	}
	files := g.hookFiles()
	for _, f := range files {
		cfg := map[string][]hookEntry{}
		for _, ev := range []string{"PreToolUse", "PostToolUse"} {
			for range g.r.IntN(3) {
				h := hookSpec{Type: "command", Command: "cat > /dev/null; " + pick(g, hookCommands...)}
				if g.chance(0.05) {
					h.Command, h.Timeout = "cat > /dev/null; sleep 3", 1
				}
				cfg[ev] = append(cfg[ev], hookEntry{Matcher: pick(g, hookMatchers...), Hooks: []hookSpec{h}})
			}
		}
		b, err := json.MarshalIndent(map[string]any{"hooks": cfg}, "", "  ")
		if err != nil {
			panic("diff: marshal hooks: " + err.Error())
		}
		g.ws[f] = string(b) + "\n"
		if f == "hooks.json" {
			g.mark(AreaHooksClaude)
		} else {
			g.mark(AreaHooksCodex)
		}
	}
}

// moveHookedCall: one call the hooks may see (one per step).
func moveHookedCall(g *gen) {
	if g.set.Mode != "" {
		g.answer()
	}
	switch g.r.IntN(6) {
	case 0:
		g.call("bash", o("command", pick(g, "echo RAN", "echo err >&2; exit 1"), "description", "Hooked bash"), AreaBashForeground)
	case 1:
		g.call("read", o("file_path", pick(g, "a.txt", "missing.txt")), AreaRead)
	case 2:
		g.call("write", o("file_path", "hooked.txt", "content", "hooked\n"), AreaWrite)
	case 3:
		g.call("read", o("file_path", "a.txt"), AreaRead)
		g.call("edit", o("file_path", "a.txt", "old_string", "alpha", "new_string", "ALPHA"), AreaEdit)
	case 4:
		g.call("job_list", o(), AreaJobTools)
	default:
		g.call("bash", o("command", "cat hooked.txt a.txt", "description", "What ran"), AreaBashForeground)
	}
}

// setupMissingRunner confines bash under a sandbox runner that does not
// exist (upstream's missing-sandbox-runner fixture): every confined call
// fails closed.
func setupMissingRunner(g *gen) {
	g.set.Mode = pick(g, oracle.WorkspaceWrite, oracle.ReadOnly)
	g.set.MissingRunner = true
	g.mark(AreaMissingRunner)
}

// moveRunnerForeground: a confined foreground call the missing runner fails.
func moveRunnerForeground(g *gen) {
	g.call("bash", o("command", pick(g, "true", "echo never"), "description", "Confined"), AreaBashForeground, AreaMissingRunner)
}

// moveRunnerBackground: a confined background job the missing runner
// kills before it runs, then read by a wait, or seen at a read (which
// awaits I/O) and read after.
func moveRunnerBackground(g *gen) {
	g.jobs++
	g.call("bash", o("command", "true", "description", "Confined job", "run_in_background", true), AreaBashBackground, AreaMissingRunner, AreaSpawnFailure)
	if g.chance(0.5) {
		g.call("job_output", o("job_id", fmtJob(g.jobs), "wait", true, "timeout_ms", 5000), AreaJobTools)
		return
	}
	g.call("read", o("file_path", "a.txt"), AreaRead)
	g.call("job_output", o("job_id", fmtJob(g.jobs)), AreaJobTools)
	if g.chance(0.5) {
		g.call("job_list", o(), AreaJobTools)
	}
}
