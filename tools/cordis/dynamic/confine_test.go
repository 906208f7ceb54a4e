package dynamic

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/sandbox"
	"github.com/dshsim/dshsim/sandbox/sandboxtest"
	"github.com/dshsim/dshsim/tools/cordis"
)

func TestMain(m *testing.M) { os.Exit(sandboxtest.Main(m)) }

// TestDynamicCodeRunsConfined: a dynamic package is code the session
// wrote, an attacker's entry point. Under workspace-write, under each real
// backend, its host code (at registration) and its tool's execute (at a
// call) write inside the workspace and are denied outside it; the host's
// files say so.
func TestDynamicCodeRunsConfined(t *testing.T) {
	for _, backend := range []string{sandbox.BackendBwrap, sandbox.BackendLandlock} {
		t.Run(backend, func(t *testing.T) {
			p := sandboxtest.Provider(t, backend)
			ws, outside := sandboxtest.TempDir(t, "dshsim-dyn-ws-"), sandboxtest.TempDir(t, "dshsim-dyn-out-")
			f := newFixture(t)
			f.host.Runner.Confiner = p
			f.host.Runner.Policy = func(*pipeline.Call) (sandbox.Policy, error) {
				return sandbox.Policy{Mode: sandbox.WorkspaceWrite, WorkspaceRoot: ws}, nil
			}
			tryWrite := func(path string) string {
				return `(() => { try { fs.writeFileSync(` + quote(path) + `, 'x'); return 'wrote'; } catch (e) { return e.code; } })()`
			}
			host := `return async (ctx) => {
  const fs = await import('node:fs');
  const atDefine = ` + tryWrite(filepath.Join(outside, "define.txt")) + `;
  harness.registerTool(ctx, harness.defineTool({
    name: 'probe', description: 'Writes.', parameters: {},
    output: { schema: { type: 'string' }, render(_a, v) { return [{ type: 'text', text: v }] } },
    async execute() {
      const fs = await import('node:fs');
      return JSON.stringify({ atDefine, inside: ` + tryWrite(filepath.Join(ws, "in.txt")) + `, outside: ` + tryWrite(filepath.Join(outside, "call.txt")) + ` });
    }
  }));
}`
			f.define(t, host)
			if r := f.call(cordis.RunName, runArgs); r.IsError {
				t.Fatalf("run: %+v", r.Content)
			}
			r := f.call("probe", `{}`)
			if r.IsError {
				t.Fatalf("probe: %+v", r.Content)
			}
			denied := `"EROFS"`
			if backend == sandbox.BackendLandlock {
				denied = `"EACCES"`
			}
			if want := `{"atDefine":` + denied + `,"inside":"wrote","outside":` + denied + `}`; r.Text() != want {
				t.Fatalf("value %s, want %s", r.Text(), want)
			}
			for _, name := range []string{"define.txt", "call.txt"} {
				if _, err := os.Stat(filepath.Join(outside, name)); err == nil {
					t.Errorf("%s was written on the host", name)
				}
			}
			if _, err := os.Stat(filepath.Join(ws, "in.txt")); err != nil {
				t.Errorf("the workspace write is missing: %v", err)
			}
		})
	}
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return strings.ReplaceAll(string(b), "'", `\'`)
}

// TestDynamicCodeSeesNoSecret: the agent's environment never reaches a
// dynamic package's code, nor its results or errors. Under each real
// backend, a secret in the agent's environment (and in the environment a
// process of the agent's user started with) is not in the tool's
// process.env, its /proc/self/environ, its parent's, nor any process's
// it can read; host code that throws its environment at registration
// throws no secret either.
func TestDynamicCodeSeesNoSecret(t *testing.T) {
	const secret = "dshsim-dynamic-secret-4f1c"
	t.Setenv("DSHSIM_DYNAMIC_SECRET", secret)
	holder := exec.Command("sleep", "120")
	holder.Env = []string{"DSHSIM_DYNAMIC_SECRET=" + secret}
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { holder.Process.Kill(); holder.Wait() })
	for _, backend := range []string{sandbox.BackendBwrap, sandbox.BackendLandlock} {
		t.Run(backend, func(t *testing.T) {
			p := sandboxtest.Provider(t, backend)
			ws := sandboxtest.TempDir(t, "dshsim-dyn-ws-")
			f := newFixture(t)
			f.host.Runner.Confiner = p
			f.host.Runner.Policy = func(*pipeline.Call) (sandbox.Policy, error) {
				return sandbox.Policy{Mode: sandbox.WorkspaceWrite, WorkspaceRoot: ws}, nil
			}
			f.define(t, `return async (ctx) => {
  harness.registerTool(ctx, harness.defineTool({
    name: 'probe', description: 'Looks for secrets.', parameters: {},
    output: { schema: { type: 'string' }, render(_a, v) { return [{ type: 'text', text: v }] } },
    async execute() {
      const fs = await import('node:fs');
      const proc = await import('node:process');
      const read = (p) => { try { return fs.readFileSync(p, 'latin1'); } catch (e) { return e.code; } };
      const all = [];
      for (const pid of fs.readdirSync('/proc').filter((d) => /^[0-9]+$/.test(d))) all.push(read('/proc/' + pid + '/environ'));
      return JSON.stringify({ env: process.env, procEnv: proc.env, self: read('/proc/self/environ'), parent: read('/proc/' + process.ppid + '/environ'), all });
    }
  }));
}`)
			if r := f.call(cordis.RunName, runArgs); r.IsError {
				t.Fatalf("run: %s", r.Text())
			}
			r := f.call("probe", `{}`)
			if r.IsError || !strings.Contains(r.Text(), `"self":`) {
				t.Fatalf("probe: %s", r.Text())
			}
			if strings.Contains(r.Text(), secret) || strings.Contains(string(r.Value), secret) {
				t.Fatalf("the secret reached the result: %s", r.Text())
			}
			f.define(t, `return async () => { const fs = await import('node:fs'); let parent; try { parent = fs.readFileSync('/proc/' + process.ppid + '/environ', 'latin1') } catch (e) { parent = e.code } throw new Error('env ' + JSON.stringify(process.env) + ' parent ' + parent) }`)
			if r := f.call(cordis.RunName, runArgs); !r.IsError || !strings.Contains(r.Text(), "env {") || strings.Contains(r.Text(), secret) {
				t.Fatalf("run of a throwing package = %q", r.Text())
			}
		})
	}
}

// TestAConfinedModeWithoutAConfinerRunsNothing: under workspace-write
// with no confiner, the host code never runs (unconfined or otherwise):
// cordis_run fails and the file it would write outside the workspace is
// not there.
func TestAConfinedModeWithoutAConfinerRunsNothing(t *testing.T) {
	ws, outside := sandboxtest.TempDir(t, "dshsim-dyn-ws-"), sandboxtest.TempDir(t, "dshsim-dyn-out-")
	f := newFixture(t)
	f.host.Runner.Confiner = nil
	f.host.Runner.Policy = func(*pipeline.Call) (sandbox.Policy, error) {
		return sandbox.Policy{Mode: sandbox.WorkspaceWrite, WorkspaceRoot: ws}, nil
	}
	mark := filepath.Join(outside, "ran.txt")
	f.define(t, `return async () => { (await import('node:fs')).writeFileSync(`+quote(mark)+`, 'x') }`)
	// the probe works: unconfined, it writes the mark
	pol := f.host.Runner.Policy
	f.host.Runner.Policy = func(*pipeline.Call) (sandbox.Policy, error) {
		return sandbox.Policy{Mode: sandbox.DangerFullAccess, WorkspaceRoot: ws}, nil
	}
	if r := f.call(cordis.RunName, runArgs); r.IsError {
		t.Fatalf("unconfined run = %q", r.Text())
	}
	if err := os.Remove(mark); err != nil {
		t.Fatalf("the unconfined probe wrote nothing: %v", err)
	}
	f.host.Runner.Policy = pol
	if r := f.call(cordis.RunName, runArgs); !r.IsError || !strings.Contains(r.Text(), "cordis_run: snap-1/pkg-1:") {
		t.Fatalf("run = %q, want a refusal", r.Text())
	}
	if _, err := os.Stat(mark); err == nil {
		t.Fatal("the host code ran")
	}
}
