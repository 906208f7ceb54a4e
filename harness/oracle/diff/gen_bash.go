package diff

import (
	"fmt"
	"strings"
)

// bashOutputs are foreground commands whose output is the same on every
// machine and every run: no pid, time, path or environment is printed.
var bashOutputs = []string{
	"echo hello",
	"printf 'no newline'",
	"printf 'a\\tb\\r\\nc\\n'",
	"printf 'caf\\xe9\\n'",
	"printf 'nul\\000byte\\n'",
	"printf '\\033[31mred\\033[0m\\n'",
	"echo out; echo err >&2",
	"echo err >&2; exit 3",
	"exit 1",
	"exit 2",
	"exit 42",
	"exit 255",
	"nosuchcommand_dshgen",
	"printf '\\n\\n\\n'",
	"true",
	"seq 1 5",
	"seq 1 300",
	"cat a.txt",
	"cat missing.txt",
	"cat",
	"read x; echo \"got:$x\"",
	"echo $((6*7))",
	"printf 'x%.0s' $(seq 1 100)",
	"printf 'trailing spaces   \\n\\n'",
	"printf '\\r'",
	"printf 'line\\rover\\n'",
	"printf '\\xef\\xbb\\xbfbom line\\n'",
	"echo '€ and ü'",
	"printf 'emoji \\xf0\\x9f\\x98\\x80\\n'",
	"printf '\\xf0\\x9f'",
	"ls sub",
	"test -d sub && echo dir",
	"echo a; sleep 0.2; echo b",
	"exec 1>&-; echo gone",
	"echo to-stderr 1>&2; echo to-stdout",
	"head -c 63999 /dev/zero | tr '\\0' a",
	"head -c 64001 /dev/zero | tr '\\0' b",
}

// moveBashOutput: a foreground command from the palette.
func moveBashOutput(g *gen) {
	cmd := pick(g, bashOutputs...)
	g.call("bash", o("command", cmd, "description", "Generated command"), AreaBashForeground)
}

// timeouts are foreground timeouts: fractions of a millisecond, zero,
// negatives, strings and null among them.
var timeouts = []any{0.5, 0.25, 0.999, 1.5, 250.7, 1, 0, -1, 100, 300, "300", nil, true, 0.0001, 1e-9, 59999.5, 2147483648}

// moveBashTimeout: a command that outlives a short timeout, with a
// timeoutMs from the palette.
func moveBashTimeout(g *gen) {
	t := pick(g, timeouts...)
	cmd := "sleep 1.5; echo NEVER"
	if f, ok := number(t); !ok || f <= 0 || f >= 100 {
		// a timeout under a few milliseconds races the command's first
		// output and its trap in upstream's own runs: only a command that
		// prints nothing before it sleeps meets one
		cmd = pick(g, cmd, "echo before; sleep 1.5; echo after", "trap '' TERM; sleep 1.5; echo survived", "echo quick")
	}
	g.call("bash", o("command", cmd, "description", "Timed command", "timeoutMs", t), AreaBashTimeout)
	if f, ok := t.(float64); ok && f != float64(int64(f)) {
		g.mark(AreaTimeoutFraction)
	}
}

// number is a generated JSON number as a float64.
func number(v any) (float64, bool) {
	switch n := v.(type) {
	case int:
		return float64(n), true
	case float64:
		return n, true
	}
	return 0, false
}

// moveBashArgs: arguments the schema allows or refuses.
func moveBashArgs(g *gen) {
	variants := []obj{
		o("command", "echo x"),
		o("command", "echo x", "description", ""),
		o("command", "echo x", "description", 42),
		o("description", "No command"),
		o("command", "", "description", "Empty"),
		o("command", "   ", "description", "Blank"),
		o("command", 7, "description", "Number"),
		o("command", "pwd | sed 's|.*/||'", "description", "Workdir", "workdir", pick(g, "sub", "sub/", "./sub", ".", "nope", "a.txt", "..", "")),
		o("command", "echo x", "description", "Extra key", "extra", true),
		o("command", "echo x", "description", "Foreground", "run_in_background", false),
		o("command", "echo x", "description", "String flag", "run_in_background", "true"),
		o("command", "echo x", "description", "Null workdir", "workdir", nil),
	}
	g.call("bash", pick(g, variants...), AreaBashArgs)
}

// moveBashSignal: commands that end by a signal or leave children.
func moveBashSignal(g *gen) {
	cmd := pick(g, "echo before; kill -9 $$", "kill -TERM $$", "kill -HUP $$", "kill -INT $$", "(sleep 0.1; echo child) & echo parent", "echo x; kill -SEGV $$")
	g.call("bash", o("command", cmd, "description", "Signal"), AreaBashForeground)
}

// moveParallel: two concurrency-safe or exclusive calls in one step (no
// hooks: parallel calls interleave their hook events upstream).
func moveParallel(g *gen) {
	if g.hooks {
		moveBashOutput(g)
		return
	}
	a := pick(g, g.readable...)
	b := pick(g, g.readable...)
	second := pick(g,
		callOf("read", o("file_path", b)),
		callOf("bash", o("command", pick(g, "echo p1", "printf p2", "exit 4"), "description", "Parallel")),
		callOf("read", o("file_path", "missing.txt")))
	g.steps = append(g.steps, stepOf(callOf("read", o("file_path", a, "limit", 2)), second))
	g.mark(AreaParallel, AreaRead)
}

// moveJobQuick: a background job that ends soon, read by a wait.
func moveJobQuick(g *gen) {
	g.jobs++
	cmd := pick(g, "echo BG_%d", "echo BG_%d; exit 3", "echo BG_%d >&2", "printf 'BG_%d'", "sleep 0.3; echo BG_%d")
	if strings.Contains(cmd, "%d") {
		cmd = fmt.Sprintf(cmd, g.jobs)
	}
	g.call("bash", o("command", cmd, "description", "Background job", "run_in_background", true), AreaBashBackground)
	g.call("job_output", o("job_id", fmt.Sprintf("bash-%d", g.jobs), "wait", true, "timeout_ms", 10000), AreaJobTools)
	if g.chance(0.4) {
		g.call("job_output", o("job_id", fmt.Sprintf("bash-%d", g.jobs)), AreaJobTools)
	}
}

// moveJobKill: a long background job, killed, then waited for.
func moveJobKill(g *gen) {
	g.jobs++
	id := fmt.Sprintf("bash-%d", g.jobs)
	g.call("bash", o("command", pick(g, "sleep 30", "exec sleep 30"), "description", "Long job", "run_in_background", true), AreaBashBackground)
	kill := o("job_id", id)
	if g.chance(0.5) {
		kill = append(kill, kv{"reason", "not needed"})
	}
	g.call("job_kill", kill, AreaJobTools)
	g.call("job_output", o("job_id", id, "wait", true, "timeout_ms", 10000), AreaJobTools)
	if g.chance(0.5) {
		g.call("job_kill", o("job_id", id), AreaJobTools)
	}
}

// moveJobSpawnFailure: a background job whose spawn fails: a working
// directory that is not a directory fails the call at once; a missing one
// starts a job that fails, which a wait then reads or whose notice the host
// sees at the next call that awaits I/O (a notice the host sees only once
// the turn has ended opens a turn of its own upstream: not explored).
func moveJobSpawnFailure(g *gen) {
	wd := pick(g, "nope", "a.txt", "sub/missing")
	if wd != "a.txt" {
		g.jobs++
	}
	g.call("bash", o("command", "echo never", "description", "Spawn fails", "run_in_background", true, "workdir", wd), AreaBashBackground, AreaSpawnFailure)
	if g.chance(0.5) {
		g.call("job_output", o("job_id", fmtJob(g.jobs), "wait", true, "timeout_ms", 5000), AreaJobTools)
	} else {
		g.call("bash", o("command", "sleep 0.3", "description", "Let the host see the job"), AreaBashForeground)
	}
	if g.chance(0.4) {
		g.call("job_list", o(), AreaJobTools)
	}
}

// moveJobQueries: job tools on unknown ids and with odd arguments.
func moveJobQueries(g *gen) {
	variants := []struct {
		name string
		args obj
	}{
		{"job_list", o()},
		{"job_output", o("job_id", "bash-99")},
		{"job_kill", o("job_id", "bash-99")},
		{"job_output", o()},
		{"job_output", o("job_id", 1)},
		{"job_output", o("job_id", "bash-99", "wait", "yes")},
		{"job_output", o("job_id", "bash-99", "wait", true, "timeout_ms", pick[any](g, 0.5, -1, 0, "10", 1e12))},
		{"job_kill", o("job_id", "")},
		{"job_list", o("extra", 1)},
	}
	v := pick(g, variants...)
	g.call(v.name, v.args, AreaJobTools)
}
