package bash

import (
	"encoding/json"

	"github.com/dshsim/dshsim/escalation"
)

// VERBATIM model-facing texts (seed-version-deltas.md §3-§4, fs-spill-render.md §6).
const (
	// Description is the tool description (newer upstream; the escalation
	// paragraph, the exit-code sentence and the background sentence are gone).
	Description = "Execute a bash command (`bash -c`) and return its stdout/stderr. Each call runs in a fresh shell; pass `workdir` instead of using `cd`. Managed `$DSH_*` variables expose current harness environment facts. Long output is truncated to its tail; the full output is saved to a file whose path is reported when available. Commands may run under a file sandbox; a blocked file operation is reported as `[sandbox: file access denied under <mode> mode]`, a policy denial: do not retry another way."
	// PromptSection is the tool:bash prompt section (order 105).
	PromptSection = "Check the [exit code: N] marker on every bash result; investigate failures before moving on."
	// CommandDescription describes the command parameter.
	CommandDescription = "The bash command to execute."
	// TimeoutDescriptionKill describes timeoutMs without promotion.
	TimeoutDescriptionKill = "Timeout in milliseconds. The executor applies its configured default and cap, and kills the command on expiry."
	// TimeoutDescriptionPromote describes timeoutMs with promotion.
	TimeoutDescriptionPromote = "Timeout in milliseconds. The executor applies its configured default and cap; on expiry the command moves to the background as a job instead of being killed."
	// WorkdirDescription describes workdir.
	WorkdirDescription = "Working directory for this command. Defaults to the session workspace; a relative path is resolved against it."
	// BackgroundDescription describes run_in_background.
	BackgroundDescription = "Run in the background and return a job id immediately (collect with job_output, stop with job_kill). No timeout applies."
	// DescriptionDescription describes the description parameter. Upstream's
	// text (tool-bash index.ts:250-252) is not quoted by any spec we hold, so
	// this one is ours, not verbatim.
	DescriptionDescription = "A short description of what this command does, shown to the user."
)

// Parameters returns the JSON Schema of the bash arguments. The escalation
// fields are present only when escalation is advertised (a confining
// executor); run_in_background only when background execution is enabled.
func Parameters(promote, background, escalationAdvertised bool) json.RawMessage {
	timeout := TimeoutDescriptionKill
	if promote {
		timeout = TimeoutDescriptionPromote
	}
	props := map[string]any{
		"command":     map[string]any{"type": "string", "description": CommandDescription},
		"description": map[string]any{"type": "string", "description": DescriptionDescription},
		"timeoutMs":   map[string]any{"type": "number", "description": timeout},
		"workdir":     map[string]any{"type": "string", "description": WorkdirDescription},
	}
	if background {
		props["run_in_background"] = map[string]any{"type": "boolean", "description": BackgroundDescription}
	}
	if escalationAdvertised {
		for k, v := range escalation.SchemaProperties(escalation.SubjectCommand) {
			props[k] = v
		}
	}
	b, err := json.Marshal(map[string]any{"type": "object", "properties": props, "required": []string{"command", "description"}})
	if err != nil {
		panic(err) // static data
	}
	return b
}

// OutputSchema is the JSON Schema of the bash value (what run_code programs
// receive): upstream's background and foreground shapes, plus the promoted
// shape of a foreground command moved to a job at its timeout (newer
// upstream) and the foreground's optional stopped reason.
var OutputSchema = json.RawMessage(`{"oneOf":[` +
	`{"type":"object","properties":{"kind":{"type":"string","const":"background"},"jobId":{"type":"string"}},"required":["kind","jobId"],"additionalProperties":false},` +
	`{"type":"object","properties":{"kind":{"type":"string","const":"promoted"},"jobId":{"type":"string"},"timeoutMs":{"type":"number"},"output":{"type":"string"}},"required":["kind","jobId","timeoutMs","output"],"additionalProperties":false},` +
	`{"type":"object","properties":{"kind":{"type":"string","const":"foreground"},` +
	`"exitCode":{"oneOf":[{"type":"number"},{"type":"null"}]},"signal":{"oneOf":[{"type":"string"},{"type":"null"}]},` +
	`"timedOut":{"type":"boolean"},"aborted":{"type":"boolean"},"timeoutMs":{"type":"number"},` +
	`"stdout":` + streamSchema + `,"stderr":` + streamSchema + `,"stopped":{"type":"string"},` +
	`"sandbox":{"type":"object","properties":{"mode":{"type":"string"},"denied":{"type":"boolean"},"enforcement":{"type":"string"},"runnerFailed":{"type":"boolean"}},"required":["mode","denied"],"additionalProperties":false}},` +
	`"required":["kind","exitCode","signal","timedOut","aborted","timeoutMs","stdout","stderr"],"additionalProperties":false}]}`)

const streamSchema = `{"type":"object","properties":{"text":{"type":"string"},"truncated":{"type":"boolean"},"spillPath":{"type":"string"}},"required":["text","truncated"],"additionalProperties":false}`
