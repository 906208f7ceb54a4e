package fs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/dshsim/dshsim/escalation"
	"github.com/dshsim/dshsim/fsobserve"
	"github.com/dshsim/dshsim/internal/jsjson"
	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/sandbox"
	"github.com/dshsim/dshsim/tools/toolreg"
)

// Defaults of the read caps.
const (
	DefaultReadLimit         = 2000
	DefaultReadMaxLineLength = 2000
	DefaultReadMaxBytes      = 51200
	DefaultReadStreamMinSize = 10485760
)

// PolicyFunc resolves the standing sandbox policy of one call (mode and
// workspace root). The pipeline's policy package provides the real one.
type PolicyFunc func(call *pipeline.Call) (sandbox.Policy, error)

// Config composes the three tools.
type Config struct {
	// FS is the local provider (required).
	FS *fsobserve.Local
	// Observations is the read-before-write policy. Nil composes the bare
	// deployment: writes and edits are unguarded.
	Observations *fsobserve.Observations
	// Policy makes the file system confining: write and edit are fenced by the
	// call's sandbox mode, resolve relative paths against the policy's
	// workspace root and advertise sandbox_permissions + justification. Nil
	// means non-confining (no fence, no escalation fields).
	Policy PolicyFunc
	// Escalate approves an escalation (escalation.New(approver)); nil means
	// no approval service is composed, so every real widening is refused.
	Escalate escalation.Func
	// ReadLimit is read's default and maximum limit (default 2000).
	ReadLimit int
	// ReadMaxLineLength caps each returned line, in UTF-16 units (default 2000).
	ReadMaxLineLength int
	// ReadMaxBytes caps the selected text of one read (default 51200).
	ReadMaxBytes int
	// ReadStreamMinSize is accepted for configuration parity (default 10 MiB):
	// reads always stream with bounded memory, so it changes no result.
	ReadStreamMinSize int
	// Images composes read_image (nil: not composed).
	Images *ImageConfig
}

// Tools holds the model-facing tools' definitions (the package's view of
// them; [New] returns their registrations).
type Tools struct {
	// Read, Write and Edit are the tool definitions.
	Read, Write, Edit pipeline.Tool
	// ReadImage is read_image (zero when Config.Images is nil).
	ReadImage pipeline.Tool
	cfg       Config
}

// New validates cfg and returns the registrations of read, write and edit
// (tools of the safety stack, with the tool:read, tool:write and tool:edit
// prompt sections, orders 100 to 102), then read_image when composed.
func New(cfg Config) ([]toolreg.Tool, error) {
	t, err := build(cfg)
	if err != nil {
		return nil, err
	}
	out := []toolreg.Tool{
		{Def: t.Read, Section: &toolreg.Section{Name: "tool:read", Order: 100, Text: SectionRead}, SafetyStack: true},
		{Def: t.Write, Section: &toolreg.Section{Name: "tool:write", Order: 101, Text: SectionWrite}, SafetyStack: true},
		{Def: t.Edit, Section: &toolreg.Section{Name: "tool:edit", Order: 102, Text: SectionEdit}, SafetyStack: true},
	}
	if t.ReadImage.Name != "" {
		out = append(out, toolreg.Tool{Def: t.ReadImage})
	}
	return out, nil
}

// build validates cfg and returns the tools.
func build(cfg Config) (*Tools, error) {
	if cfg.FS == nil {
		return nil, errors.New("tool-fs: no filesystem provider (Config.FS is nil)")
	}
	for _, c := range []struct {
		name string
		v    *int
		def  int
	}{
		{"readLimit", &cfg.ReadLimit, DefaultReadLimit},
		{"readMaxLineLength", &cfg.ReadMaxLineLength, DefaultReadMaxLineLength},
		{"readMaxBytes", &cfg.ReadMaxBytes, DefaultReadMaxBytes},
		{"readStreamMinSize", &cfg.ReadStreamMinSize, DefaultReadStreamMinSize},
	} {
		if *c.v == 0 {
			*c.v = c.def
		}
		if *c.v < 0 {
			return nil, fmt.Errorf("tool-fs: %s must be a positive integer", c.name)
		}
	}
	t := &Tools{cfg: cfg}
	adv := cfg.Policy != nil
	t.Read = pipeline.Tool{Name: "read", Description: ReadDescription, Parameters: readSchema(cfg.ReadLimit), Run: signalled(t.runRead),
		OutputSchema: ReadOutputSchema, ConcurrencySafe: true}
	t.Write = pipeline.Tool{Name: "write", Description: WriteDescription, Parameters: writeSchema(adv), Run: signalled(t.runWrite), OutputSchema: WriteOutputSchema}
	t.Edit = pipeline.Tool{Name: "edit", Description: EditDescription, Parameters: editSchema(adv), Run: signalled(t.runEdit), OutputSchema: EditOutputSchema}
	if cfg.Images != nil {
		t.ReadImage = pipeline.Tool{Name: ReadImageName, Description: ReadImageDescription, Parameters: json.RawMessage(readImageSchema),
			Run: signalled(t.runReadImage), OutputSchema: ReadImageOutputSchema, ConcurrencySafe: true}
	}
	return t, nil
}

// All returns read, write and edit, then read_image when composed.
func (t *Tools) All() []pipeline.Tool {
	all := []pipeline.Tool{t.Read, t.Write, t.Edit}
	if t.ReadImage.Name != "" {
		all = append(all, t.ReadImage)
	}
	return all
}

// args is a call's decoded argument object.
type args map[string]json.RawMessage

// decodeArgs decodes the call's argument object. The schema-level check
// (types, required, enum) is the pipeline's, before the body
// ([pipeline.CheckArgs]); a body run without it still refuses a non-object.
func decodeArgs(call *pipeline.Call) (args, error) {
	var a args
	if err := call.DecodeArgs(&a); err != nil || a == nil {
		return nil, pipeline.InvalidArgsError(`"arguments" must be an object`)
	}
	return a, nil
}

// str returns the string at key: present is false when absent or null.
func (a args) str(key string) (s string, present bool, ok bool) {
	raw, has := a[key]
	if !has || string(raw) == "null" {
		return "", false, true
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", true, false
	}
	return s, true, true
}

func (a args) filePath() (string, error) {
	s, present, ok := a.str("file_path")
	if !present || !ok || strings.TrimSpace(s) == "" {
		return "", errors.New("file_path must be a non-empty string")
	}
	return s, nil
}

// positiveInt reads an optional positive integer; def when absent.
func (a args) positiveInt(key string, def int) (int, error) {
	raw, has := a[key]
	if !has || string(raw) == "null" {
		return def, nil
	}
	var f float64
	if err := json.Unmarshal(raw, &f); err != nil || f < 1 || f != float64(int64(f)) || f > 1<<53 {
		return 0, fmt.Errorf("%s must be a positive integer", key)
	}
	return int(f), nil
}

func (a args) escalationArgs() (escalation.Args, error) {
	return escalation.DecodeArgs(a, func(key string, _ json.RawMessage) error {
		return pipeline.InvalidArgsError(fmt.Sprintf("%q must be a string", key))
	})
}

// sessionCwd is the directory a call's relative paths resolve against when no
// confining policy applies: the session header cwd (canonicalized only when it
// or the path has a ".." segment), else the provider's cwd.
func (t *Tools) sessionCwd(call *pipeline.Call, path string) string {
	if call.Agent() == nil || call.Agent().Session == nil {
		return t.cfg.FS.Cwd()
	}
	cwd := call.Agent().Session.Header().Cwd
	if !filepath.IsAbs(cwd) {
		return t.cfg.FS.Cwd()
	}
	if hasDotDot(cwd) || hasDotDot(path) {
		if real, err := filepath.EvalSymlinks(cwd); err == nil {
			return real
		}
	}
	return cwd
}

func hasDotDot(p string) bool {
	for _, seg := range strings.Split(filepath.ToSlash(p), "/") {
		if seg == ".." {
			return true
		}
	}
	return false
}

// errNoSandboxingFS refuses sandbox_permissions in a non-confining composition.
var errNoSandboxingFS = errors.New("sandbox_permissions is not available in this composition (no sandboxing filesystem to escalate)")

// callPolicy resolves the per-call policy of a write or edit through the
// escalation opening with the file-tool rules (pairing in full; a request for
// the standing mode returns without approval; any real widening goes through
// Escalate): nil when the file system does not confine. Everything here
// happens before any I/O.
func (t *Tools) callPolicy(ctx context.Context, call *pipeline.Call, a args) (*sandbox.Policy, error) {
	ea, err := a.escalationArgs()
	if err != nil {
		return nil, err
	}
	o := escalation.Opening{Subject: escalation.SubjectOperation, Standing: t.cfg.Policy, Escalate: t.cfg.Escalate}
	if t.cfg.Policy == nil {
		o.Unconfined = errNoSandboxingFS
	}
	pol, err := o.Open(ctx, call, ea)
	if err != nil || t.cfg.Policy == nil {
		return nil, err
	}
	return &pol, nil
}

// fileArgs decodes the arguments of a call naming a file (the pipeline has
// checked them against the tool's schema, escalation fields included when
// advertised) and returns them with the file_path.
func fileArgs(call *pipeline.Call) (args, string, error) {
	a, err := decodeArgs(call)
	if err != nil {
		return nil, "", err
	}
	path, err := a.filePath()
	return a, path, err
}

// mutationTarget opens a write or edit (callPolicy) and resolves path: against
// the policy's workspace root under a confining file system, else the
// session cwd. The policy is nil when the file system does not confine.
func (t *Tools) mutationTarget(ctx context.Context, call *pipeline.Call, a args, path string) (fsobserve.Target, *sandbox.Policy, error) {
	pol, err := t.callPolicy(ctx, call, a)
	if err != nil {
		return fsobserve.Target{}, nil, err
	}
	var cwd string
	if pol != nil && filepath.IsAbs(pol.WorkspaceRoot) {
		cwd = pol.WorkspaceRoot
	} else {
		cwd = t.sessionCwd(call, path)
	}
	target, err := t.cfg.FS.Resolve(path, cwd)
	return target, pol, err
}

// fence applies the sandbox fence and rewrites a denial for the model.
func (t *Tools) fence(target fsobserve.Target, pol *sandbox.Policy) error {
	if pol == nil {
		return nil
	}
	if err := t.cfg.FS.Fence(target, *pol); err != nil {
		if pipeline.HasCode(err, fsobserve.CodeSandboxDenied) {
			return SandboxDenial(pol.Mode, err)
		}
		return err
	}
	return nil
}

// SandboxDenial is the model-facing denial: the marker, a newline, and the
// escalation hint for an operation (code FS_SANDBOX_DENIED).
func SandboxDenial(mode sandbox.Mode, cause error) error {
	e := fsobserve.Errorf(fsobserve.CodeSandboxDenied, "%s\n%s", sandbox.DenialMarker(mode), sandbox.EscalationHint(escalation.SubjectOperation))
	e.Cause = cause
	return e
}

// --8<-- [start:remedy]
// Remedy appends the retry instruction to FS_STALE_VERSION (" — re-read the
// file, then retry") and FS_NOT_OBSERVED (" — read the file, then retry"),
// keeping name and code and chaining the cause; other errors pass unchanged.
func Remedy(err error) error {
	name, code, ok := pipeline.CodeOf(err)
	if !ok {
		return err
	}
	var suffix string
	switch code {
	case fsobserve.CodeStaleVersion:
		suffix = " — re-read the file, then retry"
	case fsobserve.CodeNotObserved:
		suffix = " — read the file, then retry"
	default:
		return err
	}
	return &pipeline.Error{Name: name, Code: code, Message: pipeline.ErrorMessage(err) + suffix, Cause: err}
}

// --8<-- [end:remedy]

// signalled runs a tool's body with the call's cancellation merged into its
// context.
func signalled(run func(context.Context, *pipeline.Call) (pipeline.Output, error)) func(context.Context, *pipeline.Call) (pipeline.Output, error) {
	return func(ctx context.Context, call *pipeline.Call) (pipeline.Output, error) {
		ctx, cancel := signal(ctx, call)
		defer cancel()
		return run(ctx, call)
	}
}

// signal merges the call's cancellation into ctx.
func signal(ctx context.Context, call *pipeline.Call) (context.Context, context.CancelFunc) {
	if call.Signal() == nil || call.Signal() == ctx {
		return context.WithCancel(ctx)
	}
	ctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(call.Signal(), cancel)
	return ctx, func() { stop(); cancel() }
}

// marshal encodes v as JSON without HTML escaping.
func marshal(v any) json.RawMessage {
	b, err := jsjson.Marshal(v)
	if err != nil {
		panic("tools/fs: result not encodable: " + err.Error())
	}
	return b
}

// fileEnvelope is the <path>/<type>/<content> wrapper of read and write results.
func fileEnvelope(display, body string) string {
	return "<path>" + display + "</path>\n<type>file</type>\n<content>\n" + body + "\n</content>"
}
