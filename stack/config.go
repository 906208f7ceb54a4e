package stack

import (
	"github.com/dshsim/dshsim/pipeline/autoreview"
	"github.com/dshsim/dshsim/pipeline/session"
	"github.com/dshsim/dshsim/sandbox"
	"github.com/dshsim/dshsim/stack/options"
	"github.com/dshsim/dshsim/tools/code/noderuntime"
	"github.com/dshsim/dshsim/tools/goal"
	"github.com/dshsim/dshsim/tools/planmode"
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
	ShellTools
	// LSP composes the lsp tool.
	LSP *LSPConfig
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
	// PlanMode composes exit_plan_mode, a selection applied at the step's start (Stack.PreStep).
	PlanMode *planmode.Config
	// Served serves the bodies of tools beyond the safety stack from a
	// recording; New refuses it for a tool of the safety stack.
	Served *ServedConfig
}

// ShellTools are the tools beyond the safety stack that run a shell or a terminal, or edit files in their own way.
type ShellTools struct {
	// Terminal composes the terminal (PTY) tools.
	Terminal *TerminalConfig
	// Pwsh composes pwsh (served from the recording where PowerShell does
	// not run and Served is given).
	Pwsh *PwshConfig
	// PersistentShell composes the persistent bash (tool-bash-persistent)
	// in the one-shot bash's place: Without.Bash must leave that out (both
	// are named bash). The shell is confined as bash's commands are.
	PersistentShell *PersistentShellConfig
	// Editor composes str_replace_editor, observed and fenced as the file
	// tools are.
	Editor *EditorConfig
}

// The options of the stack's areas are package stack/options's types.
type (
	SpillConfig           = options.Spill
	HooksConfig           = options.Hooks
	BashConfig            = options.Bash
	JobsConfig            = options.Jobs
	FilesConfig           = options.Files
	SessionQueryConfig    = options.SessionQuery
	Without               = options.Without
	ImagesConfig          = options.Images
	SkillsConfig          = options.Skills
	FileSearchConfig      = options.FileSearch
	TerminalConfig        = options.Terminal
	LSPConfig             = options.LSP
	PersistentShellConfig = options.PersistentShell
	EditorConfig          = options.Editor
	PwshConfig            = options.Pwsh
	ServedConfig          = options.Served
)
