package sims

import (
	"slices"

	"github.com/dshsim/dshsim/harness"
	"github.com/dshsim/dshsim/sandbox/sandboxtest"
)

// All returns every sim, sorted by name (a fresh copy of the table).
// cmd/dsh-sim runs these; nothing registers itself.
func All() []harness.Sim { return slices.Clone(table) }

// table lists the sims, sorted by name: one entry each, its Run in <area>.go.
var table = []harness.Sim{
	{Name: "agent-scope", Files: []string{"txt/agent-scope.txt"}, Run: runAgentScope,
		Summary: "agent scopes on the real stack: lookup order, a scoped deny against everything that tries to undo it, delegation, a read-only workflow step"},
	{Name: "auto-review", Files: []string{"txt/auto-review.txt"}, Run: runAutoReview,
		Summary: "Auto review on the real stack: off by default; approved calls run with full access, rejected ones ask the user, reviewer errors and time-outs fail closed"},
	{Name: "code", Files: []string{"txt/code-mode.txt"}, Run: runCode,
		Summary: "run_code in code mode: a program calling bash and read, a guard denying a nested call, an escalation asked from a program, a syntax error, a time-out"},
	{Name: "escalation", Files: []string{"txt/escalation.txt", "out/escalation.txt"}, Run: runEscalation,
		Summary: "approveEscalation with the real approval service: nine answerer cases, only allowed-once lets the call through"},
	{Name: "fs", Files: []string{"txt/fs-observe.txt"}, Run: runFS,
		Summary: "read-before-write: unread edit refused, read+edit accepted, stale write refused after a user edit, re-read+write accepted"},
	{Name: "hooks", Files: []string{"txt/hooks.txt"}, Run: runHooks,
		Summary: "Claude Code and Codex hooks around the real bash tool: every decision of both dialects, a timeout, a crashing hook, an invalid file, upstream's fail-open and the strict switch; then UserPromptSubmit and Stop hooks around a turn (a blocked prompt, contexts, a steered step)"},
	{Name: "pipeline", Files: []string{"txt/pipeline.txt"}, Run: runPipeline,
		Summary: "tool pipeline: seven hookups of listeners and guards around a constructed delete_path tool aimed at /etc/passwd"},
	{Name: "policy-context", Files: []string{"txt/policy-context.txt"}, Run: runPolicyContext,
		Summary: "permission presets: the events each switch appends and the runtime-context text the model sees next"},
	{Name: "render", Files: []string{"txt/render.txt"}, Run: runRender,
		Summary: "bash rendering: success, non-zero exit, stderr only, no output, truncated stream, timeout promoted to a background job, killed by signal"},
	{Name: "replay", Files: []string{"txt/escalation-approved.txt", "txt/escalation-rejected.txt", "out/replay.txt"}, Run: runReplay,
		Summary: "dsh-replay of the escalation recordings: log excerpts matched line by line, verdicts"},
	{Name: "sandbox", Files: []string{"txt/profiles.txt", "txt/probe.txt", "txt/confine.txt", "txt/landlock-runs.txt", "txt/unavailable.txt", "txt/classify.txt", "out/sandbox.txt"}, Run: runSandbox,
		Summary: "profiles for every platform, landlock-run --probe, confine(), real runs under Landlock, no usable backend, classifyRunnerFailure"},
	{Name: "spill", Files: []string{"txt/spill.txt"}, Run: runSpill,
		Summary: "spill: 400 log lines over a 300-token budget become head, gap, tail and a notice; the spill file holds the full output"},
	{Name: "subagents", Files: []string{"txt/subagents.txt"}, Run: runSubagents,
		Summary: "delegation on the real stack: a workspace-write parent delegates to a read-only child; its writes are refused by the sandbox, its escalation by the never pin, and its answer returns to the parent"},
}

// tempDirs returns n fresh directories of the run (removed after it).
func tempDirs(env *harness.Env, n int) ([]string, error) {
	dirs := make([]string, n)
	for i := range dirs {
		d, err := env.TempDir()
		if err != nil {
			return nil, err
		}
		dirs[i] = d
	}
	return dirs, nil
}

// buildRunner builds landlock-run into a fresh directory of the run: that
// directory and the runner's path.
func buildRunner(env *harness.Env) (binDir, runner string, err error) {
	if binDir, err = env.TempDir(); err != nil {
		return "", "", err
	}
	runner, err = sandboxtest.BuildRunner(env.Root, binDir)
	return binDir, runner, err
}
