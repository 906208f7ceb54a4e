package stack

import (
	"time"

	"github.com/dshsim/dshsim/attachment"
	"github.com/dshsim/dshsim/pipeline/autoreview"
	"github.com/dshsim/dshsim/pipeline/session"
	"github.com/dshsim/dshsim/sandbox"
	"github.com/dshsim/dshsim/tools/code/noderuntime"
	"github.com/dshsim/dshsim/tools/goal"
	"github.com/dshsim/dshsim/tools/jobs"
	"github.com/dshsim/dshsim/tools/lsp"
	"github.com/dshsim/dshsim/tools/served"
	"github.com/dshsim/dshsim/tools/toolreg"
)

// Config configures one stack for one session, grouped by what it
// configures: the session and its agent, the sandbox every confined tool
// shares, the listeners around the tools, then each tool's (or each area's)
// options; a zero group keeps upstream's defaults, a nil or false area
// composes nothing.
type Config struct {
	// Workspace is the session cwd and workspace root (absolute).
	Workspace string
	// Log is the session log; approvals and policy events are appended to it.
	Log *session.Log
	// Mode is the deployment default sandbox mode.
	Mode sandbox.Mode
	// Approval is the deployment approval policy, ApprovalAsk or ApprovalNever.
	Approval string
	// Answer answers approval prompts; required under ApprovalAsk.
	Answer Answerer
	// AgentPreset names the agent preset whose standing scope the root agent
	// and every delegated child sit under; "" keeps "standard".
	AgentPreset   string
	ReviewConfig  // Auto review (off when zero)
	SandboxConfig // the one sandbox confiner

	Spill SpillConfig // bounds the tools' results (off when zero)
	Hooks HooksConfig // mounts the hook bridges (none when zero)

	// ToolOptions are the safety stack's tools' options.
	ToolOptions
	// Subagents composes delegation: the subagent tools, the runtime of
	// children (in-process spawn and fork, one-shot and continuable) and
	// the workflow tool (nil: none; [DefaultSubagents] is upstream's
	// composition).
	Subagents *SubagentsConfig
	// ExtraTools are the tools beyond the safety stack (extras.go).
	ExtraTools
	// Tools are the deployment's own tools, composed after every other
	// (each a package's New bound to its configuration, toolreg.Bind):
	// tools beyond the safety stack, their registrations read like any.
	Tools []toolreg.Constructor
	// Without leaves parts of the default profile out (standalone overlays).
	Without Without
}

// ReviewConfig switches Auto review on for the root agent.
type ReviewConfig struct {
	// AutoReview switches Auto review on for the root agent (off when zero);
	// it needs Reviewer and approval policy ask.
	AutoReview autoreview.Config
	// Reviewer rates calls when AutoReview is on.
	Reviewer autoreview.Reviewer
}

// SandboxConfig is the one confiner's (sandbox/chain), which every confined tool shares.
type SandboxConfig struct {
	// SandboxChain overrides the platform backend chain (e.g. ["landlock"]);
	// nil keeps the platform's (bwrap, then landlock on Linux).
	SandboxChain []string
	// LauncherPath is the landlock-run binary; "" keeps the provider default
	// (landlock-run beside the running executable).
	LauncherPath string
	// LandlockRunner makes the Landlock backend run the runner on every
	// call instead of the in-process path (a run that must show the runner,
	// such as a recording of upstream's missing runner); each result's
	// sandbox facts say so (sandbox.Facts.Fallback).
	LandlockRunner bool
	// LandlockABICap runs the Landlock backend (the in-process path, or the
	// runner) capped at this ABI (0: no cap).
	LandlockABICap int
	// Limits bound every command started for a call (bash's, a hook's; zero
	// fields: none, as upstream); its sandbox facts name the one it hit.
	Limits sandbox.Limits
}

// ToolOptions are the safety stack's tools' options and how tools are presented.
type ToolOptions struct {
	// Bash, Jobs and Files are the safety stack's tools' options.
	Bash  BashConfig
	Jobs  JobsConfig
	Files FilesConfig
	// ToolsMode is how tools are presented: ToolsNative ("" too), ToolsCode
	// (run_code only) or ToolsBoth (every tool and run_code).
	ToolsMode string
	// CodeRuntime configures the Node runtime of run_code and of the
	// workflow tool (zero: upstream's limits).
	CodeRuntime noderuntime.Config
}

// ExtraTools are the tools beyond the safety stack; each zero value composes nothing.
type ExtraTools struct {
	// SessionQuery composes session_event_read and session_event_search.
	SessionQuery *SessionQueryConfig
	// Todo composes todo_write, parallel in_progress allowed, as every
	// upstream composition sets it (allowParallelInProgress true), unless
	// TodoOneInProgress (allowParallelInProgress false).
	Todo              bool
	TodoOneInProgress bool
	// Skills composes the skill tool and the skill catalog message.
	Skills *SkillsConfig
	// Images mounts the attachment store and read_image.
	Images *ImagesConfig
	// FileSearch composes glob and grep.
	FileSearch *FileSearchConfig
	// Terminal composes the terminal (PTY) tools.
	Terminal *TerminalConfig
	// LSP composes the lsp tool.
	LSP *LSPConfig
	// Pwsh composes pwsh (served from the recording where PowerShell does
	// not run and Served is given).
	Pwsh *PwshConfig
	// Cordis composes upstream's tool-cordis: the seven cordis_* tools and
	// their tool:cordis prompt section. Their bodies need upstream's Cordis
	// host, which never runs here: served from the recording when Served
	// is given, else refusing.
	Cordis bool
	// WebFetch composes web_fetch (its body refuses unless Served names it).
	WebFetch bool
	// Ralph composes the ralph tool (its fresh children need Subagents:
	// without it the tool is not composed).
	Ralph bool
	// Goals composes the goal tools (get_goal, create_goal, update_goal)
	// and their tool:goal section over this goal domain (nil: none).
	Goals *goal.Service
	// Served serves the bodies of tools beyond the safety stack from a
	// recording; New refuses it for a tool of the safety stack.
	Served *ServedConfig
}

// SpillConfig is the spill policy (spill, its byte budget as upstream's
// snapshot overlay used it).
type SpillConfig struct {
	// Root is the spill store root (absolute); required when MaxInlineBytes > 0.
	Root string
	// MaxInlineBytes is the spill cap in bytes; 0 leaves spill off.
	MaxInlineBytes int
}

// HooksConfig mounts the hook bridges (package hooks).
type HooksConfig struct {
	// Dir is the launch cwd the hook configs load from, ./hooks.json
	// (Claude Code) and ./codex-hooks.json (Codex), as the acp-agent loads
	// them; "" mounts no hooks.
	Dir string
	// Strict fails closed where upstream's hooks fail open: a config that
	// cannot be loaded refuses every call, a hook that cannot run blocks
	// its call.
	Strict bool
}

// BashConfig is the bash tool's options.
type BashConfig struct {
	// Timeout is the foreground timeout; 0 keeps 60 s.
	Timeout time.Duration
	// PromoteOnTimeout moves a foreground command still running at its
	// timeout to a background job (nil keeps the bash tool's default, on;
	// the version upstream's recordings come from kills it: set false).
	PromoteOnTimeout *bool
}

// JobsConfig is the background jobs' and the job tools' options.
type JobsConfig struct {
	// MaxConcurrentPerOwner is the admission bound (0: upstream's 10).
	MaxConcurrentPerOwner int
	// Notify receives the notice of each job that settles unreported (nil
	// drops them): the agent loop delivers it to the model.
	Notify func(jobs.Notice)
	// Gate, when set, observes background jobs only at the host's yields
	// ([jobs.Gate]), as upstream's single-threaded host: after each call
	// awaiting I/O ([Stack.Yields]) and where the caller's host would.
	Gate *jobs.Gate
	// TaskWording words the job tools as before upstream renamed
	// background tasks to jobs (the pwsh recordings' pins).
	TaskWording bool
}

// FilesConfig is the file tools' options.
type FilesConfig struct {
	// DiffBasisMaxBytes bounds the write diff basis; 0 keeps the default
	// (10 MiB).
	DiffBasisMaxBytes int64
}

// SessionQueryConfig is the session-query tools' options.
type SessionQueryConfig struct {
	// Store is the directory of the deployment's session logs: the tools
	// may name another one there of this workspace ("": this session only).
	Store string
}

// Without leaves areas of upstream's default profile out, as upstream's
// standalone overlays do.
type Without struct {
	// Bash leaves the bash tool out (the job registry stays for the others).
	Bash bool
	// JobTools leaves job_output, job_kill and job_list out.
	JobTools bool
	// FileTools leaves read, write and edit out.
	FileTools bool
	// Policy composes no sandbox-policy and approval plugins: bash runs
	// unconfined, without escalation fields or runtime context (the mode
	// must be danger-full-access).
	Policy bool
	// Approval composes no approval plugin (the sandbox policy stays): the
	// runtime context has no approval:policy section, a tool that asks is
	// denied, an escalation is refused ("no approval service is
	// composed") and a delegated child is pinned to no approval policy.
	Approval bool
}

// ImagesConfig mounts the attachment store and read_image.
type ImagesConfig struct {
	// DshHome is DSH_HOME: the store lives under <DshHome>/attachments/v1.
	DshHome string
	// Limits are the store's limits (zero fields: upstream's defaults).
	Limits attachment.Limits
	// Model is the session's model route ("": not resolvable) and
	// ImageModels the catalog's models that declare image input.
	Model       string
	ImageModels []string
}

// SkillsConfig locates the skills (DSH_HOME, DSH_AGENTS_HOME).
type SkillsConfig struct {
	DshHome, AgentsHome string
}

// FileSearchConfig configures glob and grep (zero caps: upstream's defaults).
type FileSearchConfig struct {
	// Rg is the ripgrep program ("": rg on PATH).
	Rg                       string
	SampleOverCapGlobResults bool
	GlobMaxResults           int
	GrepMaxMatches           int
}

// TerminalConfig configures the terminal tools.
type TerminalConfig struct {
	MaxResultBytes int
}

// LSPConfig configures the lsp tool.
type LSPConfig struct {
	Servers      []lsp.Server
	MaxLocations int
}

// PwshConfig configures the pwsh tool.
type PwshConfig struct {
	Persistent bool
}

// ServedConfig serves tool bodies from a recording.
type ServedConfig struct {
	// Tools are served always (never a tool of the safety stack).
	Tools []string
	// Source answers each served call (its recorded result).
	Source served.Source
}
