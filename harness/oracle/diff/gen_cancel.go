package diff

import (
	"encoding/json"

	"github.com/dshsim/dshsim/harness/oracle"
	"github.com/dshsim/dshsim/harness/replay/recording"
)

// cancelScript ends the generated first turn with a call the user cancels
// once it has written started.txt (a foreground command, a job_output wait
// on a job that writes it, or a PreToolUse hook that writes it), then asks a
// second prompt what is left. llm-replay hands out steps in order, so the
// cancelled turn's steps end with the cancelled call.
func (g *gen) cancelScript() *oracle.Script {
	g.mark(AreaCancellation)
	switch g.r.IntN(3) {
	case 0:
		g.call("bash", o("command", "touch started.txt; sleep 30", "description", "Cancelled in the foreground"), AreaBashForeground)
	case 1:
		g.jobs++
		g.call("bash", o("command", "sleep 0.5; touch started.txt; sleep 30", "description", "Background", "run_in_background", true), AreaBashBackground)
		g.call("job_output", o("job_id", fmtJob(g.jobs), "wait", true, "timeout_ms", 20000), AreaJobTools)
	default:
		// the hook is on write, which no other call of the case makes
		hooks := map[string]any{"hooks": map[string]any{"PreToolUse": []hookEntry{{Matcher: "^write$", Hooks: []hookSpec{{Type: "command", Command: "cat > /dev/null; touch started.txt; sleep 30"}}}}}}
		b, err := json.MarshalIndent(hooks, "", "  ")
		if err != nil {
			panic("diff: marshal hooks: " + err.Error())
		}
		g.ws["hooks.json"] = string(b) + "\n"
		g.mark(AreaHooksClaude)
		g.call("write", o("file_path", "ran.txt", "content", "ran\n"), AreaWrite)
	}
	first := g.steps
	g.steps = nil
	g.call("job_list", o(), AreaJobTools)
	if g.chance(0.5) {
		g.call("bash", o("command", "ls; cat ran.txt 2>&1", "description", "What is left"), AreaBashForeground)
	}
	g.steps = append(g.steps, oracle.Step{Text: "DONE"})
	return &oracle.Script{
		Prompts: []string{"(see steps)"},
		Steps: []recording.Step{
			{Op: "promptAndCancel", Text: "Run the generated calls; the user cancels the last one.", WaitForFile: &recording.WaitFile{Path: "started.txt"}},
			{Op: "waitForTurnEnd"},
			{Op: "prompt", Text: "What is left? List it, then reply DONE."},
		},
		Turns: [][]oracle.Step{first, g.steps},
	}
}

// fmtJob names the n-th background job.
func fmtJob(n int) string { return "bash-" + itoa(n) }

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}
