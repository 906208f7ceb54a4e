package stack_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"testing"

	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/sandbox"
	"github.com/dshsim/dshsim/stack"
	"github.com/dshsim/dshsim/tools/served"
)

// TestDynamicToolsTakeNoNameOfTheComposition: a running Cordis package's
// tool never takes the name of a tool the composition constructed, even
// one Without left out (read under Without.FileTools: a read-only step's
// allowlist trusts "read" by name; bash under Without.Bash), nor one
// delegation registers in a child's scope (report, structured_output),
// nor run_code, in any case; a free name registers and runs.
func TestDynamicToolsTakeNoNameOfTheComposition(t *testing.T) {
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed: the dynamic tools run in run_code's Node runtime")
	}
	names := []string{"read", "WRITE", "bash", "job_list", "report", "Structured_Output", "run_code", "cordis_stop", "snapshot_double"}
	recs := map[string]served.Recorded{}
	for i, name := range names {
		host := `return (ctx) => { harness.registerTool(ctx, harness.defineTool({ name: '` + name + `', description: 'd', parameters: {},
  output: { schema: { type: 'number' }, render(_a, v) { return [{ type: 'text', text: String(v) }] } }, async execute() { return 7 } })) }`
		define, _ := json.Marshal(map[string]any{"plugin": map[string]string{"kind": "new", "idPrefix": "snap"}, "name": "n", "purpose": "p", "code": map[string]string{"host": host}})
		ids := fmt.Sprintf(`{"pluginId":"p-%d","packageId":"pkg-%d"}`, i, i)
		run := fmt.Sprintf(`{"pluginId":"p-%d","packageId":"pkg-%d","mode":"run"}`, i, i)
		recs[fmt.Sprintf("d%d", i)] = served.Recorded{Name: "cordis_define", Arguments: define, Content: []pipeline.Block{pipeline.TextBlock("defined")}, Meta: json.RawMessage(ids)}
		recs[fmt.Sprintf("r%d", i)] = served.Recorded{Name: "cordis_run", Arguments: json.RawMessage(run), Content: []pipeline.Block{pipeline.TextBlock("running")}}
	}
	s, _, _ := composed(t, stack.Config{Mode: sandbox.DangerFullAccess, Approval: stack.ApprovalNever,
		Without:    stack.Without{Bash: true, FileTools: true, JobTools: true},
		ExtraTools: stack.ExtraTools{Cordis: true, Served: &stack.ServedConfig{Source: served.Table(recs)}}})
	ctx := context.Background()
	for i, name := range names {
		d := recs[fmt.Sprintf("d%d", i)]
		if r := s.Execute(ctx, fmt.Sprintf("d%d", i), "cordis_define", d.Arguments); r.IsError {
			t.Fatalf("define %s: %s", name, r.Text())
		}
		r := s.Execute(ctx, fmt.Sprintf("r%d", i), "cordis_run", recs[fmt.Sprintf("r%d", i)].Arguments)
		if name == "snapshot_double" {
			if r.IsError {
				t.Fatalf("run %s: %s", name, r.Text())
			}
			continue
		}
		if !r.IsError || !strings.Contains(r.Text(), fmt.Sprintf("harness.defineTool name: %q", name)) {
			t.Errorf("run of a package registering %s = %q, want the name refused", name, r.Text())
		}
	}
	if got := strings.Join(s.Tools(), ","); strings.Contains(got, "read") || strings.Contains(got, "bash") {
		t.Errorf("tools %s", got)
	}
	if r := s.Execute(ctx, "c", "snapshot_double", json.RawMessage(`{}`)); r.IsError || r.Text() != "7" {
		t.Fatalf("snapshot_double = %q", r.Text())
	}
}
