package callbench_test

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/dshsim/dshsim/harness/callbench"
	"github.com/dshsim/dshsim/harness/oracle"
	"github.com/dshsim/dshsim/harness/replay"
	"github.com/dshsim/dshsim/harness/replay/isolate"
	"github.com/dshsim/dshsim/sandbox"
	"github.com/dshsim/dshsim/sandbox/sandboxtest"
)

func TestMain(m *testing.M) { os.Exit(sandboxtest.Main(m)) }

// bashCalls is how many bash calls of `true` one round's script makes.
const bashCalls = 30

// nnpProbe is the first call of the bash script: it prints 1 when the
// command runs with no_new_privs, which both Landlock launchers set and
// neither passthrough nor bwrap does, so a round proves its calls were
// confined by Landlock on both sides. It is not timed.
var nnpProbe = callbench.Call{Name: "bash", Args: map[string]any{"command": "grep -c 'NoNewPrivs:.1' /proc/self/status", "description": "Check the confinement"}}

// side is one stack's calls of a round.
type side struct{ upstream, ours []callbench.Timed }

// setup is what every round needs: the oracle, our runner, a scratch
// directory and upstream's Landlock agent in it.
type setup struct {
	oracle              *oracle.Oracle
	runner, base, agent string
}

func newSetup(b *testing.B) setup {
	o, err := oracle.FromEnv()
	if err != nil {
		b.Skipf("upstream's calls cannot run: %v", err)
	}
	isolate.Require(b)
	sandboxtest.RequireLandlock(b, 1)
	s := setup{oracle: o, runner: sandboxtest.Runner(b), base: sandboxtest.TempDir(b, "dshsim-callbench-")}
	s.agent = filepath.Join(s.base, "agent")
	if err := callbench.LandlockAgent(o.Dir(), s.agent); err != nil {
		b.Fatal(err)
	}
	return s
}

// round runs the script once through upstream (its Landlock agent, scenario
// settings set: set.Reminder mounts the repeat reminder, as upstream's
// dsh-base and our replay do, since thirty identical calls draw it) and once
// through our stack (the replay of upstream's log, Landlock alone: the
// default in-process path), and returns
// the calls of tool from each log. Our replay must have produced every event
// upstream's log shows (the same calls, the same results).
func (s setup) round(b *testing.B, n int, script, tool string, set oracle.Settings) side {
	ctx := context.Background()
	up, err := s.oracle.Replay(ctx, script, oracle.Options{Settings: set, Agent: s.agent})
	if err != nil {
		b.Fatal(err)
	}
	upSession, ok := up.RawSession(0)
	if !ok {
		b.Fatalf("upstream's run of %s wrote no raw session log (files: %v)", script, slices.Sorted(maps.Keys(up.Files)))
	}
	rec := filepath.Join(s.base, fmt.Sprintf("round-%d", n))
	if err := callbench.Recording(rec, script, upSession); err != nil {
		b.Fatal(err)
	}
	r := replay.Replay(ctx, rec, replay.Options{SandboxChain: []string{sandbox.BackendLandlock}, LauncherPath: s.runner, LogDir: filepath.Join(s.base, "logs")})
	if r.Verdict == replay.Failed || r.Comparison.Total == 0 || r.Comparison.Matched != r.Comparison.Total {
		b.Fatalf("our replay of upstream's run differs: %s\n%s", r.Summary(), r.Detail())
	}
	ours, err := os.ReadFile(r.LogPath)
	if err != nil {
		b.Fatal(err)
	}
	var out side
	if out.upstream, err = callbench.CallTimes(upSession, tool); err != nil {
		b.Fatal(err)
	}
	if out.ours, err = callbench.CallTimes(ours, tool); err != nil {
		b.Fatal(err)
	}
	return out
}

// median is the median of ds.
func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func took(ts []callbench.Timed) []time.Duration {
	var out []time.Duration
	for _, t := range ts {
		out = append(out, t.Took)
	}
	return out
}

// report prints and records the medians and their ratio.
func report(b *testing.B, name string, up, ours []time.Duration) {
	mu, mo := median(up), median(ours)
	r := float64(mo) / float64(mu)
	b.ReportMetric(float64(mu.Microseconds())/1000, name+"-upstream-ms")
	b.ReportMetric(float64(mo.Microseconds())/1000, name+"-ours-ms")
	b.ReportMetric(r, name+"-ours/upstream")
	if testing.Verbose() {
		fmt.Printf("%-26s upstream median %6.1f ms  ours median %6.1f ms  ratio %.2fx  (%d and %d calls, session-log times)\n",
			name, float64(mu.Microseconds())/1000, float64(mo.Microseconds())/1000, r, len(up), len(ours))
	}
}

// BenchmarkBashCallVsUpstream times one whole bash call of `true` under
// workspace-write on a Landlock host, ours (the stack's default, in-process
// Landlock path, through the replay driver) beside upstream's (its own code
// in the oracle, confined by its C Landlock runner), from each side's
// session log (package doc). One b.N iteration is one round: the script of
// a no_new_privs probe and 30 calls of `true` runs through upstream, then
// through our stack; the probe is not timed. Run it with -benchtime Nx.
func BenchmarkBashCallVsUpstream(b *testing.B) {
	s := newSetup(b)
	calls := []callbench.Call{nnpProbe}
	for range bashCalls {
		calls = append(calls, callbench.Call{Name: "bash", Args: map[string]any{"command": "true", "description": "Run true"}})
	}
	script := filepath.Join(s.base, "script")
	if err := callbench.WriteScript(script, "Run true with bash thirty times, then reply DONE.", calls); err != nil {
		b.Fatal(err)
	}
	var up, ours []time.Duration
	n := 0
	for b.Loop() {
		r := s.round(b, n, script, "bash", oracle.Settings{Mode: oracle.WorkspaceWrite, MountSettings: oracle.MountSettings{Reminder: true}})
		n++
		for who, ts := range map[string][]callbench.Timed{"upstream": r.upstream, "ours": r.ours} {
			if len(ts) != bashCalls+1 || ts[0].Text != "1\n" {
				b.Fatalf("%s: %d calls, the probe's result %q: want %d calls confined by Landlock (no_new_privs set)", who, len(ts), ts[0].Text, bashCalls+1)
			}
		}
		up, ours = append(up, took(r.upstream[1:])...), append(ours, took(r.ours[1:])...)
	}
	report(b, "bash-call", up, ours)
}

// BenchmarkRunCodeFirstCallVsUpstream times run_code's first call (a
// program returning 1, in code mode, under workspace-write on a Landlock
// host) from each side's session log: upstream's runs the program in its
// worker-thread runtime, ours in a Node child confined by the default
// in-process Landlock path. One b.N iteration is one round: a fresh
// upstream agent and a fresh replay, one first call each.
func BenchmarkRunCodeFirstCallVsUpstream(b *testing.B) {
	s := newSetup(b)
	script := filepath.Join(s.base, "script")
	if err := callbench.WriteScript(script, "Return 1 from run_code, then reply DONE.", []callbench.Call{{Name: "run_code", Args: map[string]any{"code": "return 1;", "description": "Return 1"}}}); err != nil {
		b.Fatal(err)
	}
	var up, ours []time.Duration
	n := 0
	for b.Loop() {
		r := s.round(b, n, script, "run_code", oracle.Settings{Mode: oracle.WorkspaceWrite, ToolsMode: oracle.ToolsCode, MountSettings: oracle.MountSettings{Reminder: true}})
		n++
		if len(r.upstream) != 1 || len(r.ours) != 1 || r.upstream[0].Text != "1" {
			b.Fatalf("run_code calls: upstream %+v, ours %+v; want one each, returning 1", r.upstream, r.ours)
		}
		up, ours = append(up, r.upstream[0].Took), append(ours, r.ours[0].Took)
	}
	report(b, "run-code-first-call", up, ours)
}
