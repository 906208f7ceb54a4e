package replay

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/dshsim/dshsim/harness/replay/recording"
	"github.com/dshsim/dshsim/stack"
)

// checkPins compares what the request/header pins show of the tool boundary
// with the composed stack: the run_code wire schema (compact JSON, key order
// included), the wire tool list in code mode, and the two code-mode prompt
// sections' fixed text. The rest of each pin (upstream's full default tool
// set, the other prompt sections) is outside the tool boundary: noted, not
// compared.
func checkPins(rec *recording.Recording, st *stack.Stack) (flags, notes []string) {
	if ts := rec.ToolSchemas; ts != nil {
		f, n := checkToolSchemas(ts, st, rec.ToolsMode())
		flags, notes = append(flags, f...), append(notes, n...)
	}
	if rec.HasSystemPrompt {
		f, n := checkSystemPrompt(rec.SystemPrompt, st, rec.ToolsMode())
		flags, notes = append(flags, f...), append(notes, n...)
	}
	return flags, notes
}

func compactJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("<%v>", err)
	}
	var out bytes.Buffer
	if err := json.Compact(&out, b); err != nil {
		return string(b)
	}
	return out.String()
}

func checkToolSchemas(ts *recording.ToolSchemas, st *stack.Stack, mode string) (flags, notes []string) {
	ours := map[string]recording.WireTool{}
	var ourNames, theirNames []string
	for _, t := range st.WireTools() {
		ours[t.Name] = recording.WireTool{Name: t.Name, Description: t.Description, Parameters: t.Parameters}
		ourNames = append(ourNames, t.Name)
	}
	for _, t := range ts.Initial {
		theirNames = append(theirNames, t.Name)
	}
	want, ok := ts.Tool("run_code")
	if !ok {
		return nil, []string{recording.ToolSchemasFile + " (a request/header pin) is not compared: it shows no run_code, and the other wire tools are upstream's default set"}
	}
	got, ok := ours["run_code"]
	if !ok {
		return []string{recording.ToolSchemasFile + ": the recording offers run_code, the replayed stack does not"}, nil
	}
	if w, g := compactJSON(want), compactJSON(got); w != g {
		flags = append(flags, fmt.Sprintf("%s: the run_code schema differs\n    want: %s\n    got:  %s", recording.ToolSchemasFile, w, g))
	}
	if mode == stack.ToolsCode && strings.Join(ourNames, ",") != strings.Join(theirNames, ",") {
		flags = append(flags, fmt.Sprintf("%s: code mode offers [%s], the replay offers [%s]", recording.ToolSchemasFile, strings.Join(theirNames, ", "), strings.Join(ourNames, ", ")))
	}
	if len(flags) == 0 {
		notes = append(notes, recording.ToolSchemasFile+": run_code's wire schema matches byte for byte (compact JSON)")
		if mode == stack.ToolsBoth {
			notes = append(notes, fmt.Sprintf("%s: the other %d wire tools are upstream's default set (not compared); this stack offers %s", recording.ToolSchemasFile, len(theirNames)-1, strings.Join(ourNames, ", ")))
		}
	}
	return flags, notes
}

func checkSystemPrompt(prompt string, st *stack.Stack, mode string) (flags, notes []string) {
	secs, err := st.PromptSections()
	if err != nil {
		return []string{recording.SystemPromptFile + ": " + err.Error()}, nil
	}
	hasCodeOnly := false
	for _, s := range secs {
		switch s.Name {
		case "tools:code-only":
			hasCodeOnly = true
			if !strings.Contains(prompt, "\n"+s.Text+"\n") {
				flags = append(flags, recording.SystemPromptFile+": the tools:code-only line is not in the recorded prompt")
			}
		case "tools:sdk":
			instructions, _, _ := strings.Cut(s.Text, "\n\n```ts")
			if !strings.Contains(prompt, instructions+"\n\n```ts\n") {
				flags = append(flags, recording.SystemPromptFile+": the tools:sdk instructions differ from the recorded prompt's")
			}
		}
	}
	if mode == stack.ToolsBoth && strings.Contains(prompt, "`run_code` is the only tool you can call directly") {
		flags = append(flags, recording.SystemPromptFile+": both mode's prompt holds the tools:code-only line")
	}
	if mode == stack.ToolsCode && !hasCodeOnly {
		flags = append(flags, recording.SystemPromptFile+": code mode renders no tools:code-only section")
	}
	if len(flags) == 0 {
		if len(secs) > 0 {
			notes = append(notes, recording.SystemPromptFile+": the code-mode sections' fixed text matches; the SDK's declarations and the other sections describe upstream's full tool set (not compared)")
		} else {
			notes = append(notes, recording.SystemPromptFile+" (a request/header pin) is not compared: dsh-replay checks the tool boundary only")
		}
	}
	return flags, notes
}
