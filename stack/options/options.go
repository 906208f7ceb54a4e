package options

import (
	"slices"
	"time"

	"github.com/dshsim/dshsim/attachment"
	"github.com/dshsim/dshsim/tools/jobs"
	"github.com/dshsim/dshsim/tools/lsp"
	"github.com/dshsim/dshsim/tools/served"
)

// Spill is the spill policy (spill, its byte budget as upstream's
// snapshot overlay used it).
type Spill struct {
	// Root is the spill store root (absolute); required when MaxInlineBytes > 0.
	Root string
	// MaxInlineBytes is the spill cap in bytes; 0 leaves spill off.
	MaxInlineBytes int
}

// Hooks mounts the hook bridges (package hooks).
type Hooks struct {
	// Dir is the launch cwd the hook configs load from, ./hooks.json
	// (Claude Code) and ./codex-hooks.json (Codex), as the acp-agent loads
	// them; "" mounts no hooks.
	Dir string
	// Strict fails closed where upstream's hooks fail open: a config that
	// cannot be loaded refuses every call, a hook that cannot run blocks
	// its call.
	Strict bool
}

// Bash is the bash tool's options.
type Bash struct {
	// Timeout is the foreground timeout; 0 keeps 60 s.
	Timeout time.Duration
	// PromoteOnTimeout moves a foreground command still running at its
	// timeout to a background job (nil keeps the bash tool's default, on;
	// the version upstream's recordings come from kills it: set false).
	PromoteOnTimeout *bool
}

// Jobs is the background jobs' and the job tools' options.
type Jobs struct {
	// MaxConcurrentPerOwner is the admission bound (0: upstream's 10).
	MaxConcurrentPerOwner int
	// Notify receives the notice of each job that settles unreported (nil
	// drops them): the agent loop delivers it to the model.
	Notify func(jobs.Notice)
	// Gate, when set, observes background jobs only at the host's yields
	// ([jobs.Gate]), as upstream's single-threaded host: after each call
	// awaiting I/O (the stack's Yields) and where the caller's host would.
	Gate *jobs.Gate
	// TaskWording words the job tools as before upstream renamed
	// background tasks to jobs (the pwsh recordings' pins).
	TaskWording bool
}

// Files is the file tools' options.
type Files struct {
	// DiffBasisMaxBytes bounds the write diff basis; 0 keeps the default
	// (10 MiB).
	DiffBasisMaxBytes int64
}

// SessionQuery is the session-query tools' options.
type SessionQuery struct {
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

// Images mounts the attachment store and read_image.
type Images struct {
	// DshHome is DSH_HOME: the store lives under <DshHome>/attachments/v1.
	DshHome string
	// Limits are the store's limits (zero fields: upstream's defaults).
	Limits attachment.Limits
	// Model is the session's model route ("": not resolvable) and
	// ImageModels the catalog's models that declare image input.
	Model       string
	ImageModels []string
}

// Capable reports whether the session's model declares image input (false
// on a nil Images: images are off).
func (c *Images) Capable() bool {
	return c != nil && c.Model != "" && slices.Contains(c.ImageModels, c.Model)
}

// Route is the model route read_image and inline image prompts check (""
// on a nil Images, or when the route is unknown).
func (c *Images) Route() string {
	if c == nil {
		return ""
	}
	return c.Model
}

// Skills locates the skills (DSH_HOME, DSH_AGENTS_HOME).
type Skills struct {
	DshHome, AgentsHome string
}

// FileSearch configures glob and grep (zero caps: upstream's defaults).
type FileSearch struct {
	// Rg is the ripgrep program ("": rg on PATH).
	Rg                       string
	SampleOverCapGlobResults bool
	GlobMaxResults           int
	GrepMaxMatches           int
}

// Terminal configures the terminal tools.
type Terminal struct {
	MaxResultBytes int
}

// LSP configures the lsp tool.
type LSP struct {
	Servers      []lsp.Server
	MaxLocations int
}

// PersistentShell is tool-bash-persistent's configuration (zero
// fields: upstream's defaults).
type PersistentShell struct {
	TimeoutMs   int64
	Description string
}

// Editor is tool-str-replace-editor's configuration (zero fields:
// upstream's defaults).
type Editor struct {
	MaxOutputChars int
	Description    string
	// Unobserved mounts the editor on the bare provider, as upstream's
	// minimal overlay does (no fs-observation-policy): no read-before-write
	// record, a create only where nothing exists and an edit at the version
	// its own stat reads.
	Unobserved bool
}

// Pwsh configures the pwsh tool.
type Pwsh struct {
	Persistent bool
}

// Served serves tool bodies from a recording.
type Served struct {
	// Tools are served always (never a tool of the safety stack).
	Tools []string
	// Source answers each served call (its recorded result).
	Source served.Source
}
