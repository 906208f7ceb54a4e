package dynamic

import (
	"encoding/json"
	"os"
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
