package bash

import (
	"encoding/json"
	"strings"

	"github.com/dshsim/dshsim/escalation"
	"github.com/dshsim/dshsim/pipeline"
)

// VERBATIM model-facing texts, as upstream's recordings pin them
// (tool-schemas.expected.json). The newer upstream rewrote the description,
// but that is not what the recorded model saw.
const (
	// descriptionBase opens the tool description.
	descriptionBase = "Execute a bash command (`bash -c`) and return its stdout/stderr. Each call runs in a fresh shell: no state (cwd, variables, functions) persists between calls — pass `workdir` instead of using `cd`. Non-zero exits are reported as `[exit code: N]`. Current harness environment facts are exposed through managed `$DSH_*` variables; inspect them when needed. Commands may run under a file sandbox; a blocked file operation is reported as `[sandbox: file access denied under <mode> mode]` — a policy denial, not a bug in the command; do not retry another way. Long output is truncated to its tail; the full output is saved to a file whose path is reported when available."
	// descriptionBackground follows when run_in_background is enabled.
	descriptionBackground = "Set `run_in_background: true` for long-running commands: the call returns a job id immediately; read its output with `job_output` and stop it with `job_kill`."
	// descriptionNoBackground replaces it when background execution is disabled.
	descriptionNoBackground = "Background execution is not available; long-running commands must finish within the timeout."
	// descriptionEscalation closes the description of a confining executor.
	descriptionEscalation = "Attempting a command the sandbox may deny is safe and expected: run it and read the marker rather than assuming the denial. When a command is denied and a wider mode would let it succeed, escalate immediately in the same turn — the one sanctioned exception to a denial: retry the exact same command once with `sandbox_permissions` (the narrowest wider mode that suffices) plus a one-sentence `justification`. Do not detour through chat to ask permission first — the approval prompt raised by that retry is how the user consents. If the session states approval prompts are disabled, there is no exception: a denial is final — do not set `sandbox_permissions`. Never escalate speculatively: ground the request in a real denial — normally the one this command just hit; escalating up front is fine only when this session already denied the same access. A rejected escalation is final for that command — stop and explain, never work around it — but it does not forbid attempting or escalating other commands later."

	// PromptSection is the tool:bash prompt section (order 105).
	PromptSection = "Check the [exit code: N] marker on every bash result; investigate failures before moving on."
	// CommandDescription describes the command parameter.
	CommandDescription = "The bash command to execute."
	// DescriptionDescription describes the description parameter.
	DescriptionDescription = "Clear, concise description of what this command does in active voice, 5-10 words (shown in the UI). Examples: \"ls\" → \"List files in current directory\"; \"git status\" → \"Show working tree status\"; \"npm install\" → \"Install package dependencies\"."
	// TimeoutDescriptionKill describes timeoutMs without promotion.
	TimeoutDescriptionKill = "Timeout in milliseconds. The executor applies its configured default and cap, and kills the command on expiry."
	// TimeoutDescriptionPromote describes timeoutMs with promotion (the newer
	// upstream's text; no recording shows it).
	TimeoutDescriptionPromote = "Timeout in milliseconds. The executor applies its configured default and cap; on expiry the command moves to the background as a job instead of being killed."
	// WorkdirDescription describes workdir.
	WorkdirDescription = "Working directory for this command. Defaults to the session workspace; a relative path is resolved against it."
	// BackgroundDescription describes run_in_background.
	BackgroundDescription = "Run in the background and return a job id immediately (collect with job_output, stop with job_kill). No timeout applies."
)

// Description returns the tool description: the base text, the background
// sentence (or its replacement when background execution is disabled), and
// the escalation paragraph for a confining executor.
func Description(background, escalationAdvertised bool) string {
	parts := []string{descriptionBase, descriptionBackground}
	if !background {
		parts[1] = descriptionNoBackground
	}
	if escalationAdvertised {
		parts = append(parts, descriptionEscalation)
	}
	return strings.Join(parts, " ")
}

// Parameters returns the JSON Schema of the bash arguments in upstream's
// order. The escalation fields are present only when escalation is
// advertised (a confining executor); run_in_background only when background
// execution is enabled.
func Parameters(promote, background, escalationAdvertised bool) json.RawMessage {
	timeout := TimeoutDescriptionKill
	if promote {
		timeout = TimeoutDescriptionPromote
	}
	params := []pipeline.Param{
		{Name: "command", Type: "string", Description: CommandDescription},
		{Name: "description", Type: "string", Description: DescriptionDescription},
		{Name: "timeoutMs", Type: "number", Description: timeout},
		{Name: "workdir", Type: "string", Description: WorkdirDescription},
	}
	if background {
		params = append(params, pipeline.Param{Name: "run_in_background", Type: "boolean", Description: BackgroundDescription})
	}
	if escalationAdvertised {
		params = append(params, escalation.SchemaParams(escalation.SubjectCommand)...)
	}
	return pipeline.ObjectSchema(params, []string{"command", "description"})
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
