package recording

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/dshsim/dshsim/compaction"
)

// Sandbox backends a recording may pin (sandboxBackend).
const (
	BackendBwrap    = "bwrap"
	BackendLandlock = "landlock"
)

// CwdToken in landlockRunner expands to the replay's workspace.
const CwdToken = "{{cwd}}"

// Settings are what a recording cannot state itself: how upstream's snapshot
// suite configured the scenario (its overlay settings per scenario). They live
// in dshsim.replay.json beside the recording; absent keys keep the default
// profile. [SettingKeys] documents each key.
type Settings struct {
	ToolKnobs
	ModelKnobs
	SandboxKnobs
	DelegationKnobs
	// WorkspaceContext configures the workspace instructions (AGENTS.md).
	WorkspaceContext *WorkspaceContext `json:"workspaceContext,omitempty"`
	// Profile names the upstream overlay the scenario ran under, which
	// decides the tools beyond the safety stack ([Profiles]); "" is the
	// default profile.
	Profile string `json:"profile,omitempty"`
	// Prepare names upstream's workspace preparation for the scenario
	// ([Preparations]), run after workspace/ is copied.
	Prepare string `json:"prepare,omitempty"`
	// Symlinks are the workspace paths upstream's fixture holds as
	// symlinks: each is one in the seed, or a link stub (the file a
	// checkout without symlinks writes) restored as one ([SeedLinks]).
	Symlinks []string `json:"symlinks,omitempty"`
	// ResumeSeed is the number of events at the head of the log that
	// upstream's test file seeded before the run resumed the session (0:
	// a fresh session): the replay writes them, then resumes as upstream
	// does (an open turn closed, session/end-seed).
	ResumeSeed int `json:"resumeSeed,omitempty"`
	// Prompt is the prompt upstream's test file gives a scenario of a
	// front end whose directory holds no input.json (a headless run's
	// task): the replay's one prompt step.
	Prompt string `json:"prompt,omitempty"`
	// UIAnswer is the web UI's answer to every approval request
	// (allowed-once or rejected), as a web scenario's e2e file registers
	// it; "" leaves the requests to permissionAnswers (none: cancelled).
	UIAnswer string `json:"uiAnswer,omitempty"`
	// UIQuestions are the web UI's answers to ask_user_question, by
	// question id, as a web scenario's e2e file gives them (the options
	// it picks, the text it types).
	UIQuestions []QuestionAnswer `json:"uiQuestions,omitempty"`
	// Note says why the settings are needed (free text, for reviewers).
	Note string `json:"note,omitempty"`
}

// ToolKnobs are the settings of the tools' options.
type ToolKnobs struct {
	// SpillMaxInlineBytes is the spill cap in UTF-8 bytes; 0 leaves spill off.
	SpillMaxInlineBytes int `json:"spillMaxInlineBytes,omitempty"`
	// DiffBasisMaxBytes bounds the write diff basis (0: upstream's 10 MiB).
	DiffBasisMaxBytes int64 `json:"diffBasisMaxBytes,omitempty"`
	// BashTimeoutMs is the foreground bash timeout (0: 60000).
	BashTimeoutMs int `json:"bashTimeoutMs,omitempty"`
	// MaxConcurrentJobsPerOwner is the background-job admission bound (nil: 10).
	MaxConcurrentJobsPerOwner *int `json:"maxConcurrentJobsPerOwner,omitempty"`
	// SessionQuery composes session_event_read and session_event_search.
	SessionQuery bool `json:"sessionQuery,omitempty"`
	// TodoAllowParallelInProgress is tool-todo's allowParallelInProgress
	// (nil: true, as every upstream composition sets it).
	TodoAllowParallelInProgress *bool `json:"todoAllowParallelInProgress,omitempty"`
	// AskUser composes ask_user_question.
	AskUser bool `json:"askUser,omitempty"`
	// WorkflowMaxConcurrentAgents caps the workflow's agents running at
	// once (0: upstream's default, from the machine's cores).
	WorkflowMaxConcurrentAgents int `json:"workflowMaxConcurrentAgents,omitempty"`
	// ServedTools are tools whose bodies are served from the recording
	// (never a tool of the safety stack).
	ServedTools []string `json:"servedTools,omitempty"`
}

// SandboxKnobs are the settings of the sandbox.
type SandboxKnobs struct {
	// SandboxBackend pins the one sandbox backend ("" keeps the platform chain).
	SandboxBackend string `json:"sandboxBackend,omitempty"`
	// LandlockABI caps the real Landlock runner at this ABI (nil: no cap).
	LandlockABI *int `json:"landlockAbi,omitempty"`
	// LandlockRunner is the runner path, trusted without a probe;
	// {{cwd}} expands to the workspace.
	LandlockRunner string `json:"landlockRunner,omitempty"`
	// DeploymentMode is the sandbox mode the overlay's sandbox-policy
	// configures ("": the mode the runtime context states): a session's
	// own sandbox/mode overrides it, and a child inherits only that.
	DeploymentMode string `json:"deploymentMode,omitempty"`
}

// DelegationKnobs are the settings of delegation.
type DelegationKnobs struct {
	// SubagentFixture names the emulated fixture of upstream's overlay
	// ([SubagentFixtures]; "" none).
	SubagentFixture string `json:"subagentFixture,omitempty"`
	// SubagentMaxDepth caps delegation of the subagent tools (nil: 1, the
	// default composition's).
	SubagentMaxDepth *int `json:"subagentMaxDepth,omitempty"`
	// SubagentTools are the delegation tools' own knobs, by tool name
	// (subagent, subagent_fork): upstream's tool-subagent backgroundMode
	// and enableRunInBackground.
	SubagentTools map[string]SubagentTool `json:"subagentTools,omitempty"`
	// SettlementMarker emulates the suite's settlement marker for a
	// recording that is not one of [SuiteScenarios].
	SettlementMarker bool `json:"settlementMarker,omitempty"`
	// OneShotSubagent composes the one subagent tool (spawn, one-shot)
	// alone, as an overlay that mounts tool-subagent without the default
	// composition's fork, control, report and workflow tools (nil: the
	// default composition).
	OneShotSubagent *OneShotSubagent `json:"oneShotSubagent,omitempty"`
}

// ModelKnobs are the settings of the model and how the session is compared.
type ModelKnobs struct {
	// PacedModel says the recording's model was paced (llm-replay paceMs):
	// each model call lets the host observe the background jobs.
	PacedModel bool `json:"pacedModel,omitempty"`
	// RetryPolicy is the model provider's retry policy (nil: none, so an
	// error finish ends the turn).
	RetryPolicy *RetryPolicy `json:"retryPolicy,omitempty"`
	// SessionTitleLLM mounts the model-made session title; its model's
	// replies are replay.override.json's entries (the main model's script
	// is then the log's own).
	SessionTitleLLM *TitleLLM `json:"sessionTitleLlm,omitempty"`
	// ImagePrompts says whether the ACP bridge advertised inline image
	// prompts in its initialize result (nil: as the stack composes images
	// on an image-capable route, as the suite's bridge does; the oracle's
	// dsh-acp 0.0.1-rc.1 never advertises them).
	ImagePrompts *bool `json:"imagePrompts,omitempty"`
	// EventTimes compares event times in tool text modulo the time: both
	// sides' ISO times (as upstream prints them) become {{eventTime}}.
	EventTimes bool `json:"eventTimes,omitempty"`
	// Compaction is upstream's dsh-compaction-basic configuration (nil:
	// the front end's composition, [Recording.CompactionConfig]).
	Compaction *compaction.Config `json:"compaction,omitempty"`
	// UpstreamCwd is the workspace path upstream's session ran in, which
	// the recording normalises to {{cwd}} ("": unknown): the between-step
	// compaction prices the request and its messages with it.
	UpstreamCwd string `json:"upstreamCwd,omitempty"`
	// ToolResultPruner mounts upstream's dsh-compaction-tool-result-pruner
	// beside the compaction (nil: not mounted).
	ToolResultPruner *compaction.PruneConfig `json:"toolResultPruner,omitempty"`
}

// SubagentTool is one delegation tool's knobs, as upstream's tool-subagent
// row sets them; an absent field keeps the default composition's.
type SubagentTool struct {
	// BackgroundMode is what run_in_background starts: "continuable" (a
	// child that takes later messages) or "one-shot" (a job).
	BackgroundMode string `json:"backgroundMode,omitempty"`
	// EnableRunInBackground false removes run_in_background: every call
	// waits.
	EnableRunInBackground *bool `json:"enableRunInBackground,omitempty"`
}

// The background modes of a delegation tool.
const (
	BackgroundContinuable = "continuable"
	BackgroundOneShot     = "one-shot"
)

// SubagentToolNames are the delegation tools subagentTools may configure
// (the ones the default composition has).
var SubagentToolNames = []string{"subagent", "subagent_fork"}

// The emulated fixtures of upstream's subagent overlays (docs/replay.md,
// Emulated fixtures).
const (
	FixtureDurabilityFailure = "durability-failure"
	FixturePublishedFailure  = "published-run-failure"
	FixtureReportFence       = "report-fence"
	FixtureResultDiagnostic  = "result-diagnostic"
	FixtureProductProviders  = "product-providers"
	FixtureSettlementFence   = "settlement-fence"
	FixtureColdChild         = "descriptorless-child"
)

// SubagentFixtures are the values of subagentFixture.
var SubagentFixtures = []string{FixtureDurabilityFailure, FixturePublishedFailure, FixtureReportFence, FixtureResultDiagnostic, FixtureProductProviders, FixtureSettlementFence, FixtureColdChild}

// Retry policy modes.
const (
	RetryNormal = "normal"
	RetryAlways = "always"
)

// RetryPolicy is a provider's retry policy as upstream configures it; an
// absent field keeps upstream's default (5 retries; the codes
// EMPTY_RESPONSE, RATE_LIMIT, SERVER, TIMEOUT, TRANSPORT; backoff 500 ms
// initial, 10 000 ms at most, jitter 0.1).
type RetryPolicy struct {
	// Mode is "normal" (bounded, retryable codes only) or "always".
	Mode string `json:"mode"`
	// MaxRetries bounds the retries of one step (normal).
	MaxRetries *int `json:"maxRetries,omitempty"`
	// RetryableCodes are the failure codes retried (normal).
	RetryableCodes []string `json:"retryableCodes,omitempty"`
	// Backoff is the delay between attempts.
	Backoff *Backoff `json:"backoff,omitempty"`
}

// Backoff is a retry policy's delay: initial·2^(retry-1), at most max,
// times a jitter factor in [1-ratio, 1+ratio].
type Backoff struct {
	InitialDelayMs *float64 `json:"initialDelayMs,omitempty"`
	MaxDelayMs     *float64 `json:"maxDelayMs,omitempty"`
	JitterRatio    *float64 `json:"jitterRatio,omitempty"`
}

// TitleLLM is upstream's session-title-first-prompt-llm plugin's
// configuration: the route the title model is called on and its budget.
type TitleLLM struct {
	// Provider and Model are the title model's route.
	Provider string `json:"provider"`
	Model    string `json:"model"`
	// TargetWords and TargetCjkCharacters go into the title prompt.
	TargetWords         int `json:"targetWords"`
	TargetCjkCharacters int `json:"targetCjkCharacters"`
	// MaxInputBytes bounds the framed first message (a longer one gets no
	// model title).
	MaxInputBytes int `json:"maxInputBytes"`
	// MaxOutputTokens is the title request's maxTokens.
	MaxOutputTokens int `json:"maxOutputTokens"`
	// TimeoutMs bounds the title call upstream (the replay's title model
	// answers at once).
	TimeoutMs int `json:"timeoutMs,omitempty"`
}

// OneShotSubagent is an overlay's one subagent tool: tool-subagent with
// provider spawn and backgroundMode one-shot.
type OneShotSubagent struct {
	// RunInBackground is its enableRunInBackground.
	RunInBackground bool `json:"runInBackground"`
	// MaxDepth is its maxDepth (upstream's default 3).
	MaxDepth int `json:"maxDepth"`
	// Workflow mounts the workflow tool beside it (the Python SDK's
	// packaged runtime does).
	Workflow bool `json:"workflow,omitempty"`
}

// WorkspaceContext configures upstream's workspace instructions
// (agent-instructions: AGENTS.md and CLAUDE.md discovery); absent fields
// keep the default profile's.
type WorkspaceContext struct {
	// ProjectRootMarkers name the files that make a directory the project
	// root (default [".git"]).
	ProjectRootMarkers []string `json:"projectRootMarkers,omitempty"`
	// MaxBytes bounds a rendered instruction message (default 65536; 0:
	// off).
	MaxBytes *int `json:"maxBytes,omitempty"`
	// CompactBaselineAtRead is upstream's compaction fixture: before the
	// first read of this workspace path runs, the visible baseline message
	// is replaced by the fixture's compaction message ("": no fixture).
	CompactBaselineAtRead string `json:"compactBaselineAtRead,omitempty"`
}

// Upstream's overlays a recording may name in profile.
const (
	ProfileDefault        = "default"
	ProfileImage          = "image"
	ProfileFSSearch       = "fs-search"
	ProfilePwsh           = "pwsh"
	ProfilePersistentPwsh = "persistent-pwsh"
	ProfileLSP            = "lsp"
	ProfilePTY            = "pty"
	ProfileAdvanced       = "advanced"
	ProfileWeb            = "web"
	ProfileMinimal        = "minimal"
	ProfileGoal           = "goal"
	ProfileSingleExe      = "single-exe"
)

// Profiles says what each profile composes beyond the default one.
var Profiles = map[string]string{
	ProfileDefault:        "EX/cordis.snapshot.yml: bash, the job tools, the file tools, todo_write, skill",
	ProfileImage:          "EX/image.cordis.snapshot.yml (and image-text-route): the default profile, the attachment store under DSH_HOME and read_image; catalog: deepseek-v4-flash-vision-exp declares image input",
	ProfileFSSearch:       "EX/tests/fs-search.cordis.snapshot.yml (standalone): bash unconfined, glob and grep (sampled, 4 results), no runtime context",
	ProfilePwsh:           "EX/tests/pwsh.cordis.snapshot.yml (standalone): pwsh (served where PowerShell does not run) and the job tools, no runtime context",
	ProfilePersistentPwsh: "EX/tests/persistent-pwsh.cordis.snapshot.yml (standalone): the persistent pwsh tool alone (served where PowerShell does not run), no runtime context",
	ProfileLSP:            "EX/tests/lsp.cordis.snapshot.yml: the default profile and lsp (server fixture: node ./lsp-server.mjs for .ts, 1 location)",
	ProfilePTY:            "EX/pty.cordis.snapshot.yml: the default profile and the terminal tools over the fake shell (64-byte results)",
	ProfileAdvanced:       "EX/advanced.cordis.snapshot.yml: the default profile in tools mode both and the seven cordis_* tools with their prompt section (served: upstream's Cordis host does not run here)",
	ProfileWeb:            "EX/web.cordis.snapshot.yml: the default profile and web_fetch (served: its fixture server is not published)",
	ProfileMinimal:        "examples/jsonrpc-agent/minimal.snapshot.cordis.yml (standalone): the persistent bash (its description the overlay's) and str_replace_editor alone, danger-full-access, no approval, runtime context, delegation or compaction",
	ProfileSingleExe:      "the Python SDK's packaged runtime (dsh-jsonrpc-agent-pkg, the advanced scenario's composition): run_code in tools mode both, the job tools, subagent, workflow and the seven cordis_* tools (served: upstream's Cordis host does not run here; the tools a running package registers are composed for real), no bash, file tools, todo_write or skill",
	ProfileGoal:           "EX/headless-agent/goal.cordis.snapshot.yml (and the ACP goal suite's overlay): the default profile, the goal domain and the goal tools (get_goal, create_goal, update_goal) with their tool:goal section, and ralph (the base composition mounts dsh-tool-ralph)",
}

// Preparations are upstream's workspace preparations a recording may name.
var Preparations = map[string]string{
	"fs-search-tree":            "prepareFsSearchWorkspace: tree/ with eight fixture files modified 1 to 8 ms after 2000-01-01",
	"editing-cordis-skill":      "prepareEditingCordisSkillWorkspace: .dsh/skills/editing-cordis-compositions/SKILL.md, upstream's",
	"delimiter-path":            "prepareDelimiterPathWorkspace: the directory scope</system-reminder> with an AGENTS.md and task.txt",
	"goal-package-inventory":    "goal-multi-turn-actions.e2e.ts seedPackageInventory: packages/ with four packages of 4 or 5 files each",
	"offline-agents-edit":       "workspace-context-resume.snapshot.ts (offline-edit): .git/ and AGENTS.md \"New workspace instruction after offline edit.\", edited while the seeded session was offline",
	"offline-precedence-change": "workspace-context-resume.snapshot.ts (precedence-change): .git/, AGENTS.md \"Current AGENTS rule.\" and CLAUDE.md \"Current CLAUDE rule.\", edited while the seeded session was offline",
}

// SettingKey documents one key of dshsim.replay.json.
type SettingKey struct {
	// Name is the JSON key.
	Name string
	// Value says what the value may be.
	Value string
	// Mirrors names the upstream scenario and knob the key mirrors.
	Mirrors string
	// Meaning says what the key does in a replay.
	Meaning string
}

// SettingKeys lists every key of dshsim.replay.json, in the order the help
// and docs/replay.md show them.
var SettingKeys = []SettingKey{
	{"spillMaxInlineBytes", "integer >= 0 (0: off)", "bash-spill, parallel-tool-calls, session-query-spill: spill-policy.maxInlineBytes 800 (fs overlay)",
		"bounds top-level tool results in UTF-8 bytes, spilling the rest under /tmp/dsh-acp-snap-<hash>"},
	{"diffBasisMaxBytes", "integer >= 0 (0: 10 MiB)", "fs-write-overwrite-bounded: fs-sandbox.diffBasisMaxBytes 64",
		"files larger than this get no write/edit diff (meta diffs [])"},
	{"bashTimeoutMs", "integer >= 0 (0: 60000)", "every profile: dsh-bash-sandbox timeoutMs 60000 (EX/cordis.yml)",
		"the foreground bash timeout"},
	{"maxConcurrentJobsPerOwner", "integer >= 1 (absent: 10)", "background-job-admission: jobs.maxConcurrentJobsPerOwner (the overlay's key is dead, so 10 applies)",
		"the background-job admission bound; a start beyond it is refused and never runs"},
	{"sessionQuery", "true or false", "session-query-spill: EX/session-query.cordis.snapshot.yml mounts tool-session-query",
		"composes session_event_read and session_event_search"},
	{"eventTimes", "true or false", "(ours) session-event-search-hits: session_event_search hits and session_event_read neighbours print event times, which upstream's normaliser keeps, so no re-run reproduces them",
		"compares tool text modulo event times: every YYYY-MM-DDTHH:MM:SS.mmmZ (JavaScript's toISOString) on both sides becomes {{eventTime}}"},
	{"pacedModel", "true or false", "(ours) bash-job-notice-retract: the oracle's llm-replay paceMs 100 (PROBE_PACE_MS=100)",
		"each model call is a yield of the host: background jobs' output and exits that arrived before it are observed (unpaced, they are observed only at the next tool call that awaits I/O)"},
	{"sandboxBackend", `"bwrap" or "landlock" (absent: bwrap, then landlock)`, "partial-landlock-child-failure, missing-sandbox-runner: the sandbox provider of the overlay",
		"confines bash with this one backend (overrides dsh-replay -backend)"},
	{"landlockAbi", `integer >= 1; needs sandboxBackend "landlock"`, "partial-landlock-child-failure: a Landlock provider at an older ABI (fixture partial-landlock-sandbox.ts)",
		"runs the real landlock-run capped at this ABI (--abi-cap), so below 5 the partial notice is the runner's own"},
	{"landlockRunner", `absolute path, may start with {{cwd}}; needs sandboxBackend "landlock"`, "missing-sandbox-runner: the fixture's runner {{cwd}}/.dsh-missing-sandbox-runner (DSH_SNAPSHOT_MISSING_SANDBOX_RUNNER=1)",
		"the Landlock runner, used without an availability probe as upstream's fixture does; {{cwd}} is the replay's workspace (overrides dsh-replay -landlock-run)"},
	{"subagentFixture", `"durability-failure", "published-run-failure", "report-fence", "result-diagnostic", "product-providers", "settlement-fence" or "descriptorless-child"`, "subagent-continuable, subagent-published-run-failure, subagent-report, product-subagent-result-diagnostic, product-subagent-both, headless subagent-settlement: the overlay's fixture plugins; headless descriptorless-child: subagent-diagnostic.snapshot.ts's seedDescriptorlessChild",
		"emulates that fixture (docs/replay.md, Emulated fixtures): named as emulated in the result's notes"},
	{"subagentMaxDepth", "integer >= 0 (absent: 1)", "subagent-depth-two-rejection: EX/depth-two.cordis.snapshot.yml, maxDepth 2",
		"the delegation depth cap of subagent and subagent_fork"},
	{"subagentTools", `{"subagent" or "subagent_fork": {"backgroundMode": "continuable" or "one-shot", "enableRunInBackground": true or false}} (absent: subagent continuable with run_in_background, subagent_fork one-shot without it)`, "upstream's other agents: the headless agent's team.cordis.snapshot.yml sets both tools backgroundMode one-shot, the JSON-RPC agent's cordis.yml sets subagent's enableRunInBackground false; the oracle's PROBE_SUBAGENT_BACKGROUND=one-shot and PROBE_SUBAGENT_RUN_IN_BACKGROUND=0 set subagent's",
		"composes that delegation tool with upstream's tool-subagent knobs: what run_in_background starts (a continuable child, or a one-shot child as a job) and whether the parameter exists"},
	{"settlementMarker", "true or false", "the delegating scenarios of upstream's suite (SuiteScenarios, by name): its snapshot overlay's fixture writes .dsh-snapshot-subagent-settled on every subagent/end",
		"emulates that marker for a recording that is not one of the suite's scenarios (the oracle's overlay has no such fixture)"},
	{"todoAllowParallelInProgress", "true or false (absent: true)", "every upstream composition of tool-todo sets allowParallelInProgress true; the oracle's PROBE_TODO_PARALLEL=0 sets it false",
		"todo_write's policy: false refuses a list with more than one in_progress item and describes the tool for sequential work"},
	{"askUser", "true or false", "subagent-child-question-rejection: EX/child-question.cordis.snapshot.yml adds user-questions and tool-ask-user",
		"composes ask_user_question (a root's question has no answerer here and is refused)"},
	{"workflowMaxConcurrentAgents", "integer >= 0 (0: min(16, max(1, cores-2)))", "(ours) workflow-oracle-parallel: the oracle overlay's workflow-worker-thread maxConcurrentAgents 1",
		"caps the workflow's agents running at once, so the order of their agent-start and agent-end events is the recording's on any machine"},
	{"retryPolicy", `{"mode": "normal" or "always", "maxRetries", "retryableCodes", "backoff": {"initialDelayMs", "maxDelayMs", "jitterRatio"}} (absent fields: upstream's defaults)`, "empty-response-retry: EX/retry.cordis*.yml, the replay provider's retryPolicy",
		"retries a model call that ended in an error finish as upstream's llm-retry does (llm/retry, llm/retry-started, the retried call in the same step); without it an error finish ends the turn"},
	{"sessionTitleLlm", `{"provider", "model", "targetWords", "targetCjkCharacters", "maxInputBytes", "maxOutputTokens", "timeoutMs"}`, "session-title-after-turn: EX/session-title.cordis*.yml, session-title-first-prompt-llm and its title-replay model",
		"asks a title model after the first request (session/title-llm-request) and logs its title after the turn; the title model's replies are replay.override.json's, the main model's the log's own"},
	{"workspaceContext", `{"projectRootMarkers": [names], "maxBytes": integer >= 0, "compactBaselineAtRead": "path"}`, "agent-instructions: EX/agent-instructions.cordis*.yml, workspaceContext.projectRootMarkers [.dsh-project] and the fixture workspace-context-compaction.ts",
		"the workspace instructions (AGENTS.md, CLAUDE.md and their .local files, on by default with root marker .git and 65536 bytes; maxBytes 0 turns them off); compactBaselineAtRead replaces the baseline message before the first read of that path, as upstream's fixture does"},
	{"compaction", `{"thresholdRatio", "retainRatio" or "retainTokens", "summarizationProvider" and "summarizationModel", "maxTokens", "compactionRetries", "maxOverflowRetries", "auto"} (absent fields: upstream's defaults 0.8, 0.16, 8192, 1, 1, true; absent key: the front end's composition)`, "headless compaction-recovery: EX/headless-agent/compaction.cordis.snapshot.yml, dsh-compaction-basic {thresholdRatio 0.99, retainTokens 20, maxTokens 32}; every headless composition mounts it (EX/headless-agent/cordis.yml: thresholdRatio 0.8, retainRatio 0.16, maxTokens 8192, compactionRetries 1)",
		"automatic compaction (\"auto\": false: none): a model call that failed with CONTEXT_WINDOW_EXCEEDED compacts the conversation's head (compaction/start, compaction/summary from a summary model call, the checkpoint replacing the range, compaction/end) and is retried in the same step"},
	{"upstreamCwd", "absolute path", "(ours) headless-oracle pressure-compaction: the oracle run's workspace (its log's header cwd, which the normaliser writes {{cwd}})",
		"the between-step compaction prices the recorded request header and every message holding the workspace path with this path in it, as upstream priced them (absent: priced with any path of 1 to 4095 bytes; a check whose outcome that length decides is an error naming this setting)"},
	{"toolResultPruner", `{"thresholdChars", "headChars", "tailChars"} (absent fields: upstream's defaults 8192, 4096, 1024; absent key: not mounted)`, "(ours) headless-oracle pressure-prune: the product CLI's profile over dsh-base, which mounts tool-result-pruner {thresholdChars 8192, headChars 4096, tailChars 1024}; the headless suite's compaction harness mounts it with the defaults",
		"before a compaction (between steps, once over the threshold, or on an overflow) every tool result longer than thresholdChars code points keeps its head and tail around upstream's marker: compaction/prune (its shadow price) and the shortened tool/result replacing it; then the session is measured again"},
	{"imagePrompts", "true or false (absent: true when images are composed on an image-capable route)", "(ours) diff-code-read-image: the oracle's dsh-acp 0.0.1-rc.1, whose initialize never advertises image prompts",
		"the initialize result's promptCapabilities.image"},
	{"profile", "default, image, fs-search, pwsh, persistent-pwsh, lsp, pty, advanced, web, goal, minimal or single-exe", "read-image, fs-glob-sampling, pwsh-tool-turn, lsp-definition, pty-tools, cordis-inspect-jsdoc, headless goal-tools, JSON-RPC persistent-tools, Python SDK advanced...: the scenario's EX/*.cordis.snapshot.yml overlay",
		"composes the overlay's tools beyond the safety stack (and leaves out what a standalone overlay does not mount); a tool the recording calls adds its area too"},
	{"prepare", "fs-search-tree, editing-cordis-skill, delimiter-path, goal-package-inventory, offline-agents-edit or offline-precedence-change", "fs-glob-sampling: prepareFsSearchWorkspace; skill-load: prepareEditingCordisSkillWorkspace; agent-instructions: prepareDelimiterPathWorkspace; web goal-multi-turn-actions: seedPackageInventory; headless offline-edit and precedence-change: workspace-context-resume.snapshot.ts's prepare",
		"prepares the workspace as upstream's suite does, after workspace/ is copied"},
	{"symlinks", "list of paths inside workspace/, each a symlink there or a link stub (a plain file holding only the link's relative target, no newline, naming an entry of the seed)", "agent-instructions: its fixture's AGENTS.md and nested/AGENTS.md are symlinks to AGENTS.canonical.md",
		"restores each listed link stub as the symlink it stands for after workspace/ is copied (a checkout with core.symlinks=false stores a link as such a file); a listed path that is neither is an error, and no other file is touched"},
	{"servedTools", "list of tool names, none of bash, read, write, edit, run_code, job_output, job_kill, job_list", "cordis-inspect-jsdoc: cordis_inspect_query (its data is upstream's JSDoc catalog)",
		"serves those tools' bodies from the recording (the report names them); everything around a body runs"},
	{"deploymentMode", "read-only, workspace-write or danger-full-access", "parent-override: EX/headless-agent/subagent-inheritance.cordis.snapshot.yml, sandbox-policy mode workspace-write under the session's read-only override; web plan-review: the base composition's workspace-write",
		"the stack's default sandbox mode (the deployment's); the runtime context states the session's, which its own sandbox/mode events set; a web log with no policy event takes it (approval ask, never under danger-full-access)"},
	{"oneShotSubagent", `{"runInBackground": true or false, "maxDepth": integer >= 1, "workflow": true or false}`, "parent-override: EX/headless-agent/subagent-inheritance.cordis.snapshot.yml; the JSON-RPC scenarios: EX/jsonrpc-agent/cordis.yml (tool-subagent, provider spawn, one-shot); the Python SDK's advanced (with the workflow tool)",
		"composes the one subagent tool (spawn, one-shot, that background and depth cap) alone: no subagent_fork, send_message, interrupt_agent, list_agents or report, and workflow only when workflow is true"},
	{"resumeSeed", "integer >= 0, at most the events before the log's session/end-seed", "tool-outcome-unknown, parent-override: the events semantic-checkpoint.snapshot.ts and subagent-inheritance.snapshot.ts seed before the run resumes the session",
		"writes that many of the log's first events as our session's own, then resumes it as upstream does: an open turn closed (a call without a result gets an unknown or not-started outcome), session/end-seed, the next turn numbered after the seed's"},
	{"prompt", "non-empty string", "headless-profile: the task headless.snapshot.ts passes the product CLI (a headless scenario with no input.json)",
		"the one prompt of a recording of a front end beyond ACP whose directory holds no input.json; with input.json it is an error"},
	{"uiAnswer", "allowed-once or rejected", "permission-policy-context: permission-policy-context.e2e.ts answers every approval/request allowed-once",
		"the web UI's answer to every approval request of a web session (the UI is the answerer); in another front end's recording it is an error"},
	{"uiQuestions", `[{"id": string, "selected": [labels], "custom": string (optional)}], one per question id`, "question-composer: question-composer.e2e.ts picks Blue and types a custom answer",
		"the web UI's answer to each ask_user_question question, by id (a question without one fails the call); in another front end's recording it is an error"},
	{"note", "string", "(ours)", "why the recording needs settings; for reviewers, not read by the replay"},
}

// parseSettings decodes and validates dshsim.replay.json of recording name.
func parseSettings(name string, data []byte) (Settings, error) {
	var s Settings
	// encoding/json matches keys case-insensitively: check the exact
	// spelling first, so "sandboxbackend" is an unknown key, not a match.
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(data, &keys); err == nil {
		order := slices.SortedFunc(maps.Keys(keys), func(a, b string) int {
			return bytes.Index(data, []byte(`"`+a+`"`)) - bytes.Index(data, []byte(`"`+b+`"`))
		})
		for _, k := range order { // the first unknown key in the file
			if !slices.ContainsFunc(SettingKeys, func(sk SettingKey) bool { return sk.Name == k }) {
				return Settings{}, &Error{Recording: name, File: SettingsFile, Line: lineOfKey(data, k), Field: k,
					Problem: "unknown key (known: " + knownSettingKeys() + ")"}
			}
		}
	}
	if err := decodeStrict(data, &s); err != nil {
		return Settings{}, jsonError(name, SettingsFile, data, 0, err)
	}
	if err := s.validate(name, data); err != nil {
		return Settings{}, err
	}
	return s, nil
}

func knownSettingKeys() string {
	names := make([]string, len(SettingKeys))
	for i, k := range SettingKeys {
		names[i] = k.Name
	}
	return strings.Join(names, ", ")
}

var tokenRE = regexp.MustCompile(`\{\{[^}]*\}\}`)

// validate checks the values (the keys were checked by the strict decoder);
// data locates the line of a bad key.
func (s Settings) validate(name string, data []byte) error {
	fail := func(key, format string, args ...any) error {
		return &Error{Recording: name, File: SettingsFile, Line: lineOfKey(data, key), Field: key, Problem: fmt.Sprintf(format, args...)}
	}
	switch {
	case s.SpillMaxInlineBytes < 0:
		return fail("spillMaxInlineBytes", "must be >= 0, got %d", s.SpillMaxInlineBytes)
	case s.DiffBasisMaxBytes < 0:
		return fail("diffBasisMaxBytes", "must be >= 0, got %d", s.DiffBasisMaxBytes)
	case s.BashTimeoutMs < 0:
		return fail("bashTimeoutMs", "must be >= 0, got %d", s.BashTimeoutMs)
	case s.OneShotSubagent != nil && s.OneShotSubagent.MaxDepth < 1:
		return fail("oneShotSubagent", "maxDepth must be >= 1, got %d", s.OneShotSubagent.MaxDepth)
	case s.DeploymentMode != "" && s.DeploymentMode != "read-only" && s.DeploymentMode != "workspace-write" && s.DeploymentMode != "danger-full-access":
		return fail("deploymentMode", "want read-only, workspace-write or danger-full-access, got %q", s.DeploymentMode)
	case s.ResumeSeed < 0:
		return fail("resumeSeed", "must be >= 0, got %d", s.ResumeSeed)
	case s.MaxConcurrentJobsPerOwner != nil && *s.MaxConcurrentJobsPerOwner < 1:
		return fail("maxConcurrentJobsPerOwner", "must be >= 1, got %d", *s.MaxConcurrentJobsPerOwner)
	}
	if s.SubagentFixture != "" && !slices.Contains(SubagentFixtures, s.SubagentFixture) {
		return fail("subagentFixture", "want one of %s, got %q", strings.Join(SubagentFixtures, ", "), s.SubagentFixture)
	}
	if s.WorkflowMaxConcurrentAgents < 0 {
		return fail("workflowMaxConcurrentAgents", "must be >= 0, got %d", s.WorkflowMaxConcurrentAgents)
	}
	if s.SubagentMaxDepth != nil && *s.SubagentMaxDepth < 0 {
		return fail("subagentMaxDepth", "must be >= 0, got %d", *s.SubagentMaxDepth)
	}
	for _, name := range slices.Sorted(maps.Keys(s.SubagentTools)) {
		t := s.SubagentTools[name]
		switch {
		case !slices.Contains(SubagentToolNames, name):
			return fail("subagentTools", "%q is not a delegation tool of the composition (known: %s)", name, strings.Join(SubagentToolNames, ", "))
		case t.BackgroundMode != "" && t.BackgroundMode != BackgroundContinuable && t.BackgroundMode != BackgroundOneShot:
			return fail("subagentTools", "%s.backgroundMode: want %q or %q, got %q", name, BackgroundContinuable, BackgroundOneShot, t.BackgroundMode)
		}
	}
	if _, ok := Profiles[s.Profile]; s.Profile != "" && !ok {
		return fail("profile", "unknown profile %q (known: %s)", s.Profile, keysOf(Profiles))
	}
	if _, ok := Preparations[s.Prepare]; s.Prepare != "" && !ok {
		return fail("prepare", "unknown preparation %q (known: %s)", s.Prepare, keysOf(Preparations))
	}
	for i, p := range s.Symlinks {
		if !filepath.IsLocal(p) || p != filepath.Clean(p) {
			return fail("symlinks", "symlinks[%d] %q: want a clean path inside the workspace", i, p)
		}
		if slices.Contains(s.Symlinks[:i], p) {
			return fail("symlinks", "symlinks[%d] %q: listed twice", i, p)
		}
	}
	for i, t := range s.ServedTools {
		if slices.Contains(SafetyStackTools, t) {
			return fail("servedTools", "servedTools[%d] %q: a served body can never stand in for a tool of the safety stack (%s)", i, t, strings.Join(SafetyStackTools, ", "))
		}
	}
	switch s.SandboxBackend {
	case "", BackendBwrap, BackendLandlock:
	default:
		return fail("sandboxBackend", "want %q or %q, got %q", BackendBwrap, BackendLandlock, s.SandboxBackend)
	}
	if s.LandlockABI != nil {
		if *s.LandlockABI < 1 {
			return fail("landlockAbi", "must be >= 1, got %d", *s.LandlockABI)
		}
		if s.SandboxBackend != BackendLandlock {
			return fail("landlockAbi", "needs \"sandboxBackend\": %q (the cap applies to the Landlock runner only)", BackendLandlock)
		}
	}
	if err := s.validateTurnSettings(fail); err != nil {
		return err
	}
	if s.LandlockRunner != "" {
		if s.SandboxBackend != BackendLandlock {
			return fail("landlockRunner", "needs \"sandboxBackend\": %q", BackendLandlock)
		}
		rest := strings.TrimPrefix(s.LandlockRunner, CwdToken)
		if tok := tokenRE.FindString(rest); tok != "" {
			return fail("landlockRunner", "unknown placeholder %s (only a leading %s expands)", tok, CwdToken)
		}
		if !strings.HasPrefix(rest, "/") {
			return fail("landlockRunner", "want an absolute path or %s/..., got %q", CwdToken, s.LandlockRunner)
		}
	}
	return nil
}

// validateTurnSettings checks the settings of the agent loop's pieces
// around the stack (retry policy, title model, workspace instructions).
func (s Settings) validateTurnSettings(fail func(key, format string, args ...any) error) error {
	if p := s.RetryPolicy; p != nil {
		switch {
		case p.Mode != RetryNormal && p.Mode != RetryAlways:
			return fail("retryPolicy", "mode: want %q or %q, got %q", RetryNormal, RetryAlways, p.Mode)
		case p.MaxRetries != nil && *p.MaxRetries < 0:
			return fail("retryPolicy", "maxRetries must be >= 0, got %d", *p.MaxRetries)
		case p.Mode == RetryAlways && (p.MaxRetries != nil || p.RetryableCodes != nil):
			return fail("retryPolicy", "mode \"always\" takes no maxRetries or retryableCodes")
		}
		if b := p.Backoff; b != nil {
			for _, f := range []struct {
				name string
				v    *float64
			}{{"initialDelayMs", b.InitialDelayMs}, {"maxDelayMs", b.MaxDelayMs}, {"jitterRatio", b.JitterRatio}} {
				if f.v != nil && *f.v < 0 {
					return fail("retryPolicy", "backoff.%s must be >= 0, got %v", f.name, *f.v)
				}
			}
			if b.JitterRatio != nil && *b.JitterRatio > 1 {
				return fail("retryPolicy", "backoff.jitterRatio must be <= 1, got %v", *b.JitterRatio)
			}
		}
	}
	if t := s.SessionTitleLLM; t != nil {
		switch {
		case t.Provider == "" || t.Model == "":
			return fail("sessionTitleLlm", "provider and model are required")
		case t.TargetWords < 1 || t.TargetCjkCharacters < 1 || t.MaxInputBytes < 1 || t.MaxOutputTokens < 1:
			return fail("sessionTitleLlm", "targetWords, targetCjkCharacters, maxInputBytes and maxOutputTokens must be positive integers")
		}
	}
	if c := s.Compaction; c != nil {
		if _, err := compaction.Resolve(*c); err != nil {
			var ce *compaction.ConfigError
			if errors.As(err, &ce) {
				return fail("compaction", "%s: %s", ce.Field, ce.Problem)
			}
			return fail("compaction", "%v", err)
		}
	}
	if c := s.ToolResultPruner; c != nil {
		if _, err := compaction.ResolvePruner(*c); err != nil {
			var ce *compaction.ConfigError
			if errors.As(err, &ce) {
				return fail("toolResultPruner", "%s: %s", ce.Field, ce.Problem)
			}
			return fail("toolResultPruner", "%v", err)
		}
	}
	if c := s.UpstreamCwd; c != "" && !filepath.IsAbs(c) {
		return fail("upstreamCwd", "must be an absolute path, got %q", c)
	}
	if w := s.WorkspaceContext; w != nil {
		if w.MaxBytes != nil && *w.MaxBytes < 0 {
			return fail("workspaceContext", "maxBytes must be >= 0, got %d", *w.MaxBytes)
		}
		if p := w.CompactBaselineAtRead; p != "" && !filepath.IsLocal(p) {
			return fail("workspaceContext", "compactBaselineAtRead: want a path inside the workspace, got %q", p)
		}
	}
	return nil
}

// Runner returns the landlockRunner path with {{cwd}} expanded to ws ("" when
// the setting is absent).
func (s Settings) Runner(ws string) string {
	if s.LandlockRunner == "" {
		return ""
	}
	if rest, ok := strings.CutPrefix(s.LandlockRunner, CwdToken); ok {
		return strings.TrimSuffix(ws, "/") + rest
	}
	return s.LandlockRunner
}

// SuiteSettings are the settings upstream's snapshot suite applies to its
// scenarios by name (its overlay configuration), for the knobs the
// stack owns. A recording with one of these names and no dshsim.replay.json
// replays with them, so an upstream recording copied as it is needs no file
// of ours; a dshsim.replay.json, when present, replaces them whole. Scenarios
// not listed run upstream's default profile.
var SuiteSettings = map[string]Settings{
	"bash-spill":          {ToolKnobs: ToolKnobs{SpillMaxInlineBytes: 800}, Note: "upstream's suite: EX/fs.cordis.snapshot.yml, spill-policy.maxInlineBytes 800"},
	"parallel-tool-calls": {ToolKnobs: ToolKnobs{SpillMaxInlineBytes: 800}, Note: "upstream's suite: as bash-spill (fs overlay, maxInlineBytes 800)"},
	"session-query-spill": {ToolKnobs: ToolKnobs{SpillMaxInlineBytes: 800, SessionQuery: true}, Note: "upstream's suite: EX/session-query.cordis.snapshot.yml (fs overlay, maxInlineBytes 800, tool-session-query)"},
	"fs-write-overwrite-bounded": {ToolKnobs: ToolKnobs{DiffBasisMaxBytes: 64},
		Note: "upstream's suite: EX/tests/fs-diff-bound.cordis.snapshot.yml, fs-sandbox.diffBasisMaxBytes 64",
	},
	"partial-landlock-child-failure": {SandboxKnobs: SandboxKnobs{SandboxBackend: BackendLandlock, LandlockABI: ptr(3)},
		Note: "upstream's suite: the partial-Landlock fixture provider (an older ABI); here the real runner capped at ABI 3 prints the partial notice",
	},
	"missing-sandbox-runner": {SandboxKnobs: SandboxKnobs{SandboxBackend: BackendLandlock, LandlockRunner: CwdToken + "/.dsh-missing-sandbox-runner"},
		Note: "upstream's suite: the fixture provider with DSH_SNAPSHOT_MISSING_SANDBOX_RUNNER=1, runner <cwd>/.dsh-missing-sandbox-runner (absent)",
	},
	"subagent-continuable": {DelegationKnobs: DelegationKnobs{SubagentFixture: FixtureDurabilityFailure},
		Note: "upstream's suite: EX/subagent-durability-failure.cordis.snapshot.yml (fixture subagent-durability-failure.ts)",
	},
	"subagent-published-run-failure": {DelegationKnobs: DelegationKnobs{SubagentFixture: FixturePublishedFailure},
		Note: "upstream's suite: the durability-failure overlay with DSH_SUBAGENT_PUBLISHED_FAILURE=1",
	},
	"subagent-report": {DelegationKnobs: DelegationKnobs{SubagentFixture: FixtureReportFence},
		Note: "upstream's suite: EX/subagent-report.cordis.snapshot.yml (fixture subagent-report-fence.ts)",
	},
	"subagent-child-question-rejection": {ToolKnobs: ToolKnobs{AskUser: true},
		Note: "upstream's suite: EX/child-question.cordis.snapshot.yml (user-questions, tool-ask-user, a tripwire provider)",
	},
	"subagent-depth-two-rejection": {DelegationKnobs: DelegationKnobs{SubagentMaxDepth: ptr(2)},
		Note: "upstream's suite: EX/depth-two.cordis.snapshot.yml (maxDepth 2)",
	},
	"product-subagent-result-diagnostic": {DelegationKnobs: DelegationKnobs{SubagentFixture: FixtureResultDiagnostic},
		Note: "upstream's suite: EX/subagent-result-diagnostic.cordis.snapshot.yml (fixture provider snapshot-diagnostic behind subagent_codex)",
	},
	"product-subagent-both": {DelegationKnobs: DelegationKnobs{SubagentFixture: FixtureProductProviders},
		Note: "upstream's suite: EX/product-subagent-both.cordis.snapshot.yml (two Codex and two Claude Code instances)",
	},
	"product-subagent-codex": {DelegationKnobs: DelegationKnobs{SubagentFixture: FixtureProductProviders},
		Note: "upstream's suite: the Codex-only product overlay",
	},
	"empty-response-retry": {ModelKnobs: ModelKnobs{RetryPolicy: &RetryPolicy{Mode: RetryNormal, MaxRetries: ptr(2), Backoff: &Backoff{InitialDelayMs: ptr(1.0), MaxDelayMs: ptr(1.0), JitterRatio: ptr(0.0)}}},
		Note: "upstream's suite: EX/retry.cordis.snapshot.yml, retryPolicy {mode normal, maxRetries 2, backoff 1/1/0} on the replay provider",
	},
	"session-title-after-turn": {ModelKnobs: ModelKnobs{SessionTitleLLM: &TitleLLM{Provider: "title-replay", Model: "title-model", TargetWords: 5, TargetCjkCharacters: 10, MaxInputBytes: 4096, MaxOutputTokens: 32, TimeoutMs: 5000}},
		Note: "upstream's suite: EX/session-title.cordis.snapshot.yml, session-title-first-prompt-llm on the title-replay/title-model route, whose replay takes replay.override.json",
	},
	"agent-instructions": {WorkspaceContext: &WorkspaceContext{ProjectRootMarkers: []string{".dsh-project"}, CompactBaselineAtRead: "nested/task.txt"},
		Prepare: "delimiter-path", Symlinks: []string{"AGENTS.md", "nested/AGENTS.md"},
		Note: "upstream's suite: EX/agent-instructions.cordis.snapshot.yml (projectRootMarkers [.dsh-project], fixture workspace-context-compaction.ts), prepareDelimiterPathWorkspace, and the fixture's AGENTS.md links"},
	// The scenarios of the tools beyond the safety stack.
	"read-image":                {Profile: ProfileImage, Note: "upstream's suite: EX/image.cordis.snapshot.yml"},
	"read-image-dimension":      {Profile: ProfileImage, Note: "upstream's suite: EX/image.cordis.snapshot.yml"},
	"read-image-text-route":     {Profile: ProfileImage, Note: "upstream's suite: EX/image-text-route.cordis.snapshot.yml (the image overlay, model deepseek-v4-flash)"},
	"inline-image-prompt":       {Profile: ProfileImage, Note: "upstream's suite: EX/image.cordis.snapshot.yml"},
	"code-mode-read-image":      {Profile: ProfileImage, Note: "upstream's suite: EX/code-mode-image.cordis.snapshot.yml (tools mode code, the image overlay)"},
	"fs-glob-sampling":          {Profile: ProfileFSSearch, Prepare: "fs-search-tree", Note: "upstream's suite: EX/tests/fs-search.cordis.snapshot.yml, prepareFsSearchWorkspace"},
	"skill-load":                {Prepare: "editing-cordis-skill", Note: "upstream's suite: the default overlay, prepareEditingCordisSkillWorkspace"},
	"lsp-definition":            {Profile: ProfileLSP, Note: "upstream's suite: EX/tests/lsp.cordis.snapshot.yml"},
	"pty-tools":                 {Profile: ProfilePTY, Note: "upstream's suite: EX/pty.cordis.snapshot.yml"},
	"pwsh-tool-turn":            {Profile: ProfilePwsh, Note: "upstream's suite: EX/tests/pwsh.cordis.snapshot.yml (standalone)"},
	"persistent-pwsh-tool-turn": {Profile: ProfilePersistentPwsh, Note: "upstream's suite: EX/tests/persistent-pwsh.cordis.snapshot.yml (standalone)"},
	"cordis-inspect-jsdoc":      {Profile: ProfileAdvanced, ToolKnobs: ToolKnobs{ServedTools: []string{"cordis_inspect_query"}}, Note: "upstream's suite: EX/advanced.cordis.snapshot.yml; cordis_inspect_query's data is upstream's JSDoc catalog: served"},
	"advanced-toolchain":        {Profile: ProfileAdvanced, Note: "upstream's suite: EX/advanced.cordis.snapshot.yml; the cordis_* tools need upstream's Cordis host: served"},
	"web-fetch":                 {Profile: ProfileWeb, ToolKnobs: ToolKnobs{ServedTools: []string{"web_fetch"}}, Note: "upstream's suite: EX/web.cordis.snapshot.yml with its loopback fixture server (not published): web_fetch served"},
}

// SuiteScenarios are the delegating scenarios of upstream's snapshot suite,
// by name: its snapshot overlay mounts the fixture that writes
// .dsh-snapshot-subagent-settled in the workspace on every subagent/end
// (their inputs wait for it), so a replay of one emulates it; any other
// recording does only with settlementMarker.
var SuiteScenarios = []string{
	"product-subagent-both", "product-subagent-codex", "product-subagent-result-diagnostic",
	"subagent-child-question-rejection", "subagent-continuable", "subagent-depth-two-rejection", "subagent-fork-in-process",
	"subagent-list-agents", "subagent-mixed", "subagent-multi", "subagent-published-run-failure", "subagent-report",
	"subagent-spawn-in-process", "workflow-run",
}

// Marks reports whether a replay of the recording emulates the suite's
// settlement marker: one of [SuiteScenarios], or settlementMarker.
func (r *Recording) Marks() bool {
	return r.Settings.SettlementMarker || slices.Contains(SuiteScenarios, r.Name)
}

// FrontendSuiteSettings are [SuiteSettings] of the front ends beyond ACP,
// by front end, then scenario name (a name can repeat across front ends:
// advanced-toolchain is an ACP scenario and a headless one).
var FrontendSuiteSettings = map[Frontend]map[string]Settings{
	JSONRPC: {
		"text-turn": {DelegationKnobs: DelegationKnobs{OneShotSubagent: &OneShotSubagent{MaxDepth: 3}}, Prompt: "Reply with exactly: SDK snapshot OK", Note: "upstream's suite: sdk.snapshot.ts scenario text-turn (session id sdk-snapshot-text), EX/jsonrpc-agent/cordis.snapshot.yml"},
		"bash-tool": {DelegationKnobs: DelegationKnobs{OneShotSubagent: &OneShotSubagent{MaxDepth: 3}}, Prompt: "Run this exact command with your bash tool, then reply with its stdout only: echo dsh-sdk-proof-7391", Note: "upstream's suite: sdk.snapshot.ts scenario bash-tool (session id sdk-snapshot-bash)"},
		"persistent-tools": {Profile: ProfileMinimal, Prompt: "Prove that bash state persists. Then create {{cwd}}/note.txt with a tab-indented line, view it, replace that literal tab-indented line, and make the persistent shell exit with code 9.",
			Note: "upstream's suite: sdk.snapshot.ts scenario persistent-tools, EX/jsonrpc-agent/minimal.snapshot.cordis.yml (persistent bash and str_replace_editor, danger-full-access, no runtime context)"},
		"subagent-spawn-in-process": {DelegationKnobs: DelegationKnobs{OneShotSubagent: &OneShotSubagent{MaxDepth: 3}}, Prompt: "Use the subagent tool exactly once with description 'echo probe' and prompt: Reply with exactly: child answer 42. Then reply with the subagent's final answer verbatim.",
			Note: "upstream's suite: sdk.snapshot.ts scenario subagent-spawn-in-process (session id sdk-snapshot-subagent, one child)",
		},
	},
	Goal: {
		"goal-wrapup":       {Profile: ProfileGoal, Note: "upstream's suite: goal.snapshot.ts through runScenario, EX/acp-agent/cordis.yml (the goal domain, the goal tools and the goal-round driver); the model script is replay.override.json, its goal id resolved from the request ({{fromRequest:...}})"},
		"goal-round-driver": {Profile: ProfileGoal, Note: "upstream's suite: goal.snapshot.ts (\"runs exact automatic rounds in the shipped application and persists cancellation\"), the same agent and overlay as goal-wrapup: two automatic rounds, the second cancelled, the goal paused"},
	},
	PythonSDK: {
		"advanced": {Profile: ProfileSingleExe, Prompt: "Run the advanced packaged-runtime snapshot scenario.", DelegationKnobs: DelegationKnobs{OneShotSubagent: &OneShotSubagent{MaxDepth: 3, Workflow: true}},
			Note: "upstream's Python SDK single-executable snapshot advanced: the packaged runtime's advanced composition (run_code, the job tools, subagent, workflow and the cordis_* tools, served: upstream's Cordis host does not run here), no runtime context"},
	},
	Web: {
		"goal-multi-turn-actions":   {Prepare: "goal-package-inventory", Note: "upstream's suite: goal-multi-turn-actions.e2e.ts seeds the package inventory (seedPackageInventory) and types the /goal command"},
		"plan-review":               {SandboxKnobs: SandboxKnobs{DeploymentMode: "workspace-write"}, Note: "upstream's suite: plan-review.e2e.ts on the web app that wrote no policy events at the head: its base composition's sandbox-policy mode (DSH_PERMISSION_MODE unset: workspace-write, approval ask); it types /plan with its task and approves the plan on the decision card"},
		"question-composer":         {UIQuestions: []QuestionAnswer{{ID: "color", Selected: []string{"Blue"}, Custom: "Include accessibility notes"}}, Note: "upstream's suite: question-composer.e2e.ts checks Blue and types \"Include accessibility notes\" in the composer, then presses Enter"},
		"steering":                  {UIQuestions: []QuestionAnswer{{ID: "checkpoint", Selected: []string{"Yes"}}}, Note: "upstream's suite: steering.e2e.ts answers the question card Yes, after it steered its queued message into the running turn"},
		"permission-policy-context": {UIAnswer: "allowed-once", Note: "upstream's suite: permission-policy-context.e2e.ts answers every approval/request allowed-once (the UI is the answerer) and types /permission before each prompt"},
	},
	Headless: {
		"subagent-settlement": {DelegationKnobs: DelegationKnobs{SubagentFixture: FixtureSettlementFence}, Prompt: "Start one continuable background subagent and answer from its completion notice. Do not call list_agents, send_message, job_output, or job_list.",
			Note: "upstream's suite: headless.snapshot.ts, EX/headless-agent/subagent-settlement.cordis.snapshot.yml (the base composition and the fixture subagent-settlement-fence.ts)",
		},
		"tool-outcome-unknown": {Prompt: "Continue safely from the interrupted operation.", ResumeSeed: 5,
			Note: "upstream's suite: semantic-checkpoint.snapshot.ts seeds a turn whose write_remote call was logged without a result (5 events) and resumes it with this task"},
		"parent-override": {Prompt: "Delegate the write probe to a subagent.", ResumeSeed: 4, DelegationKnobs: DelegationKnobs{OneShotSubagent: &OneShotSubagent{RunInBackground: true, MaxDepth: 1}}, SandboxKnobs: SandboxKnobs{DeploymentMode: "workspace-write"},
			Note: "upstream's suite: subagent-inheritance.snapshot.ts seeds a completed turn holding a parent-only read-only sandbox/mode (4 events) and resumes it with this task; EX/subagent-inheritance.cordis.snapshot.yml (workspace-write default, the fs tools, no bash, no approval plugin, subagent spawn maxDepth 1)",
		},
		"provider-retry": {ModelKnobs: ModelKnobs{RetryPolicy: &RetryPolicy{Mode: RetryNormal, MaxRetries: ptr(1), RetryableCodes: []string{"RATE_LIMIT"}, Backoff: &Backoff{InitialDelayMs: ptr(1.0), MaxDelayMs: ptr(1.0), JitterRatio: ptr(0.0)}}},
			Note: "upstream's suite: headless.snapshot.ts, EX/headless-agent/retry.cordis.snapshot.yml (the base composition, its DeepSeek adapter replaced by tests/fixtures/retry-snapshot-backend.mjs: retryPolicy {mode normal, maxRetries 1, retryableCodes [RATE_LIMIT], backoff 1/1/0}, its first call failing RATE_LIMIT 429)",
		},
		"missing-credential": {Prompt: "say pong",
			Note: "upstream's suite: headless.snapshot.ts, EX/headless-agent/credentials.cordis.snapshot.yml (the base composition, its DeepSeek adapter replaced by a keyless one on http://127.0.0.1:9, never dialled) with DEEPSEEK_API_KEY empty: the model call fails MISSING_CREDENTIAL",
		},
		"invalid-credential": {Prompt: "say pong",
			Note: "upstream's suite: headless.snapshot.ts, the credentials overlay of missing-credential with a DEEPSEEK_API_KEY no HTTP header can carry: the model call fails INVALID_CREDENTIAL",
		},
		"offline-edit": {Prompt: "Acknowledge the current workspace instruction.", ResumeSeed: 4, Prepare: "offline-agents-edit",
			Note: "upstream's suite: workspace-context-resume.snapshot.ts seeds a completed turn whose visible baseline holds the old AGENTS.md (4 events), edits AGENTS.md offline and resumes it with this task; EX/headless-agent/workspace-context-resume.cordis.snapshot.yml (workspaceContext maxBytes 65536, no bash, no sandbox-policy or approval plugin)",
		},
		"precedence-change": {Prompt: "Acknowledge the current workspace instruction.", ResumeSeed: 4, Prepare: "offline-precedence-change",
			Note: "upstream's suite: workspace-context-resume.snapshot.ts seeds a baseline of CLAUDE.md then AGENTS.md under instructionFileCandidates [CLAUDE.md, AGENTS.md] (4 events), changes both offline and resumes under the default precedence with this task; the model script is offline-edit's, so the log's own replies are played",
		},
		"descriptorless-child": {Prompt: "Call list_agents once and report what it shows.", ResumeSeed: 3, DelegationKnobs: DelegationKnobs{SubagentFixture: FixtureColdChild},
			Note: "upstream's suite: subagent-diagnostic.snapshot.ts seeds a completed parent turn (3 events) and a cold child session (origin subagent, no descriptor event) and resumes the parent with this task; EX/headless-agent/subagent-diagnostic.cordis.snapshot.yml (list_agents, no bash or file tools, no sandbox-policy or approval plugin)",
		},
		"pty-tools":          {Profile: ProfilePTY, Note: "upstream's suite: headless.snapshot.ts, EX/headless-agent/pty.cordis.snapshot.yml (the base composition, sandbox-policy danger-full-access and no approval plugin, the terminal tools over the ACP suite's fake-shell backend, maxResultBytes 64)"},
		"advanced-toolchain": {Profile: ProfileAdvanced, Note: "upstream's suite: EX/headless-agent/advanced.cordis.snapshot.yml (tools mode both, code runtime, tool-cordis); the cordis_* tools need upstream's Cordis host: served"},
		"compaction-recovery": {ModelKnobs: ModelKnobs{Compaction: &compaction.Config{ThresholdRatio: ptr(0.99), RetainTokens: ptr(20), MaxTokens: ptr(32)}},
			Note: "upstream's suite: headless.snapshot.ts, EX/headless-agent/compaction.cordis.snapshot.yml (dsh-compaction-basic thresholdRatio 0.99, retainTokens 20, maxTokens 32; the replay model's deepseek-v4-flash contextWindow 128000)",
		},
		"headless-profile": {Prompt: "Prove the product headless profile path with one real tool round trip.",
			ModelKnobs: ModelKnobs{SessionTitleLLM: &TitleLLM{Provider: "cli-mock", Model: "cli-mock", TargetWords: 5, TargetCjkCharacters: 10, MaxInputBytes: 4096, MaxOutputTokens: 64}},
			Note:       "upstream's suite: headless.snapshot.ts runs the product CLI (--profile headless, DSH_PERMISSION_MODE=danger-full-access) with this task; the profile's first-prompt title model on the cli-mock route makes no title",
		},
	},
}

// HeadlessCompaction is the compaction every headless composition mounts
// (EX/headless-agent/cordis.yml's dsh-compaction-basic).
var HeadlessCompaction = compaction.Config{ThresholdRatio: ptr(0.8), RetainRatio: ptr(0.16), MaxTokens: ptr(8192), CompactionRetries: ptr(1)}

// CompactionConfig is the compaction the recording's composition mounts:
// its compaction setting, else its front end's (headless:
// [HeadlessCompaction]); nil: none.
func (r *Recording) CompactionConfig() *compaction.Config {
	switch {
	case r.Settings.Compaction != nil:
		return r.Settings.Compaction
	case r.Frontend == Headless:
		c := HeadlessCompaction
		return &c
	}
	return nil
}

// SuiteSettingsOf are the suite settings of front end fe's scenarios
// ([SuiteSettings] for ACP's, else [FrontendSuiteSettings]).
func SuiteSettingsOf(fe Frontend) map[string]Settings {
	if fe == ACP || fe == "" {
		return SuiteSettings
	}
	return FrontendSuiteSettings[fe]
}

func ptr[T any](v T) *T { return &v }

// QuestionAnswer is the answer to one ask_user_question question: its id,
// the labels selected, and the text typed (optional).
type QuestionAnswer struct {
	ID       string   `json:"id"`
	Selected []string `json:"selected"`
	Custom   string   `json:"custom,omitempty"`
}

// SafetyStackTools are the tools whose bodies a recording can never have
// served (the stack refuses them too).
var SafetyStackTools = []string{"bash", "read", "write", "edit", "run_code", "job_output", "job_kill", "job_list"}

func keysOf(m map[string]string) string {
	return strings.Join(slices.Sorted(maps.Keys(m)), ", ")
}
