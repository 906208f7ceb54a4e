//lint:file-ignore ST1005 the error texts are upstream's, VERBATIM: the model reads them as upstream's tool wrote them

package editor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"unicode/utf16"

	"github.com/dshsim/dshsim/fsobserve"
	"github.com/dshsim/dshsim/internal/jsjson"
	"github.com/dshsim/dshsim/internal/jstext"
	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/sandbox"
	"github.com/dshsim/dshsim/tools/toolreg"
)

// Name is the tool's model-facing name.
const Name = "str_replace_editor"

// VERBATIM texts of upstream's tool-str-replace-editor.
const (
	// TruncatedMessage follows a clipped view or listing.
	TruncatedMessage = "<response clipped><NOTE>To save on context only part of this file has been shown to you. You should retry this tool after you have searched inside the file with `grep -n` in order to find the line numbers of what you are looking for.</NOTE>"
	// DefaultDescription is the description when the deployment sets none.
	DefaultDescription = "Custom editing tool for viewing, creating and editing files\n* State is persistent across command calls and discussions with the user\n* If `path` is a file, `view` displays the result of applying `cat -n`. If `path` is a directory, `view` lists non-hidden files and directories up to 2 levels deep\n* The `create` command cannot be used if the specified `path` already exists as a file\n* If a `command` generates a long output, it will be truncated and marked with `<response clipped>`\n\nNotes for using the `str_replace` command:\n* The `old_str` parameter should match EXACTLY one or more consecutive lines from the original file. Be mindful of whitespaces!\n* If the `old_str` parameter is not unique in the file, the replacement will not be performed. Make sure to include enough context in `old_str` to make it unique\n* The `new_str` parameter should contain the edited lines that should replace the `old_str`"
	// Parameters is the compiled schema, in upstream's key order.
	Parameters   = `{"type":"object","properties":{"command":{"type":"string","description":"The commands to run. Allowed options are: ` + "`view`, `create`, `str_replace`, `insert`" + `.","enum":["view","create","str_replace","insert"]},"path":{"type":"string","description":"Absolute path to file or directory, e.g. ` + "`/repo/file.py` or `/repo`" + `."},"file_text":{"type":"string","description":"Required parameter of ` + "`create`" + ` command, with the content of the file to be created."},"insert_line":{"type":"integer","description":"Required parameter of ` + "`insert` command. The `new_str` will be inserted AFTER the line `insert_line` of `path`" + `."},"new_str":{"type":"string","description":"Optional parameter of ` + "`str_replace`" + ` command containing the new string (if not given, no string will be added). Required parameter of ` + "`insert`" + ` command containing the string to insert."},"old_str":{"type":"string","description":"Required parameter of ` + "`str_replace` command containing the string in `path`" + ` to replace."},"view_range":{"type":"array","description":"Optional parameter of ` + "`view` command when `path`" + ` points to a file. If none is given, the full file is shown. If provided, the file will be shown in the indicated line number range, e.g. [11, 12] will show lines 11 and 12. Indexing at 1 to start. Setting ` + "`[start_line, -1]`" + ` shows all lines from ` + "`start_line`" + ` to the end of the file.","items":{"type":"integer"}}},"required":["command","path"]}`
	outputSchema = `{"type":"string"}`
)

// DefaultMaxOutputChars is upstream's maxOutputChars default.
const DefaultMaxOutputChars = 16000

// Config configures the tool.
type Config struct {
	// FS is the local file provider (required).
	FS *fsobserve.Local
	// Observations is the read-before-write policy (nil: the bare
	// provider's, as upstream without fs-observation-policy: create only
	// where nothing exists, edit at the version just read).
	Observations *fsobserve.Observations
	// Policy resolves the call's sandbox policy; its mode fences every
	// mutation as the file tools' is (nil: no sandbox policy composed,
	// nothing fenced).
	Policy func(*pipeline.Call) (sandbox.Policy, error)
	// MaxOutputChars clips a view or listing, in UTF-16 code units (0:
	// DefaultMaxOutputChars).
	MaxOutputChars int
	// Description is the model-facing description ("": DefaultDescription).
	Description string
}

// New returns str_replace_editor's registration: a tool of the safety
// stack (it writes files), no prompt section.
func New(cfg Config) ([]toolreg.Tool, error) {
	if cfg.FS == nil {
		return nil, errors.New("tool-str-replace-editor: no file provider")
	}
	if cfg.MaxOutputChars == 0 {
		cfg.MaxOutputChars = DefaultMaxOutputChars
	}
	if cfg.Description == "" {
		cfg.Description = DefaultDescription
	}
	if cfg.MaxOutputChars < 0 {
		return nil, errors.New("tool-str-replace-editor: maxOutputChars must be a positive safe integer")
	}
	if jsjson.Trim(cfg.Description) == "" {
		return nil, errors.New("tool-str-replace-editor: description must be non-empty")
	}
	t := &tool{cfg: cfg}
	return []toolreg.Tool{{Def: pipeline.Tool{Name: Name, Description: cfg.Description, Parameters: json.RawMessage(Parameters),
		OutputSchema: json.RawMessage(outputSchema), Run: t.run}, SafetyStack: true}}, nil
}

type tool struct{ cfg Config }

// args are the arguments the pipeline's schema check passed.
type args struct {
	Command    string     `json:"command"`
	Path       string     `json:"path"`
	FileText   *string    `json:"file_text"`
	InsertLine *float64   `json:"insert_line"`
	NewStr     *string    `json:"new_str"`
	OldStr     *string    `json:"old_str"`
	ViewRange  *[]float64 `json:"view_range"`
}

func (t *tool) run(ctx context.Context, call *pipeline.Call) (pipeline.Output, error) {
	var a args
	if call.DecodeArgs(&a) != nil {
		// only a body run without the pipeline's check gets here
		if err := pipeline.CheckArgs(pipeline.Tool{Name: Name, Parameters: json.RawMessage(Parameters)}, call); err != nil {
			return pipeline.Output{}, err
		}
		return pipeline.Output{}, errors.New("invalid arguments: expected an object")
	}
	var text string
	var err error
	switch a.Command {
	case "view":
		text, err = t.view(ctx, call, a)
	case "create":
		text, err = t.create(ctx, call, a)
	case "str_replace":
		text, err = t.replace(ctx, call, a)
	case "insert":
		text, err = t.insert(ctx, call, a)
	default:
		return pipeline.Output{}, fmt.Errorf("unknown command %q", a.Command)
	}
	if err != nil {
		return pipeline.Output{}, err
	}
	v, _ := json.Marshal(text)
	return pipeline.Output{Value: v, Content: []pipeline.Block{pipeline.TextBlock(text)}}, nil
}

// clip is upstream's maybeTruncate.
func clip(s string, max int) string {
	if jstext.Units(s) <= max {
		return s
	}
	return jstext.Head(s, max) + TruncatedMessage
}

// resolve is upstream's resolveTarget: a blank or relative path is
// refused before the provider resolves it.
func (t *tool) resolve(path string) (fsobserve.Target, error) {
	if jsjson.Trim(path) == "" {
		return fsobserve.Target{}, errors.New("path must be a non-empty string")
	}
	if !filepath.IsAbs(path) {
		return fsobserve.Target{}, fmt.Errorf("The path %s is not an absolute path, it should start with `/`. Maybe you meant /%s?", path, path)
	}
	return t.cfg.FS.Resolve(path, "")
}

// record notes what the call's session saw (nothing without a policy).
func (t *tool) record(call *pipeline.Call, key string, obs fsobserve.Observation) {
	if t.cfg.Observations != nil {
		t.cfg.Observations.Record(call.SessionID(), key, obs)
	}
}

// statExisting is upstream's: a missing path records absent.
func (t *tool) statExisting(call *pipeline.Call, target fsobserve.Target, command string) (fsobserve.Info, error) {
	info, exists, err := t.cfg.FS.Stat(target)
	if err != nil {
		return fsobserve.Info{}, err
	}
	if !exists {
		t.record(call, target.Key, fsobserve.Absent())
		return fsobserve.Info{}, fsobserve.Errorf(fsobserve.CodeNotFound, "The path %s does not exist. Please provide a valid path.", target.Display)
	}
	if info.Kind == fsobserve.KindDir && command != "view" {
		return fsobserve.Info{}, fsobserve.Errorf(fsobserve.CodeNotRegularFile, "The path %s is a directory and only the `view` command can be used on directories", target.Display)
	}
	return info, nil
}

// required is upstream's requiredForCommand.
func required(v *string, param, command string, allowEmpty bool) (string, error) {
	if v == nil {
		return "", fmt.Errorf("Parameter `%s` is required for command: %s", param, command)
	}
	if !allowEmpty && *v == "" {
		return "", fmt.Errorf("Parameter `%s` is empty for command: %s", param, command)
	}
	return *v, nil
}

// policy is the call's sandbox policy (nil when none is composed).
func (t *tool) policy(call *pipeline.Call) (*sandbox.Policy, error) {
	if t.cfg.Policy == nil {
		return nil, nil
	}
	p, err := t.cfg.Policy(call)
	if err != nil {
		return nil, err
	}
	return &p, nil
}

// write fences the mutation by the call's mode, writes under intent and
// records what the session now sees.
func (t *tool) write(ctx context.Context, call *pipeline.Call, pol *sandbox.Policy, target fsobserve.Target, content string, intent fsobserve.WriteIntent) error {
	if pol != nil {
		if err := t.cfg.FS.Fence(target, *pol); err != nil {
			return err
		}
	}
	res, err := t.cfg.FS.WriteText(ctx, target, content, intent)
	if err != nil {
		return err
	}
	t.record(call, target.Key, fsobserve.Present(res.Version))
	return nil
}

func (t *tool) view(ctx context.Context, call *pipeline.Call, a args) (string, error) {
	target, err := t.resolve(a.Path)
	if err != nil {
		return "", err
	}
	info, err := t.statExisting(call, target, "view")
	if err != nil {
		return "", err
	}
	if info.Kind == fsobserve.KindDir {
		if a.ViewRange != nil {
			return "", errors.New("The `view_range` parameter is not allowed when `path` points to a directory.")
		}
		return t.list(ctx, target)
	}
	if info.Kind != fsobserve.KindFile {
		return "", fsobserve.Errorf(fsobserve.CodeNotRegularFile, "cannot view \"%s\": not a regular file or directory", target.Display)
	}
	content, err := t.cfg.FS.ReadText(ctx, target)
	if err != nil {
		return "", err
	}
	t.record(call, target.Key, fsobserve.Present(info.Version))
	return formatView(target.Display, content, t.cfg.MaxOutputChars, a.ViewRange)
}

// formatView is upstream's formatFileView: cat -n of the file or of the
// requested lines.
func formatView(path, content string, max int, viewRange *[]float64) (string, error) {
	all := strings.Split(content, "\n")
	lines, first := all, 1
	prompt := fmt.Sprintf("Here's the content of %s with line numbers (which has a total of %d lines)", path, len(all))
	if viewRange != nil {
		vr := *viewRange
		if len(vr) != 2 {
			return "", errors.New("Invalid `view_range`. It should be a list of two integers.")
		}
		shown := "[" + jsjson.FormatNumber(vr[0]) + ", " + jsjson.FormatNumber(vr[1]) + "]"
		init, final := int(vr[0]), int(vr[1])
		switch {
		case init < 1 || init > len(all):
			return "", fmt.Errorf("Invalid `view_range`: %s. Its first element `%d` should be within the range of lines of the file: [1, %d]", shown, init, len(all))
		case final > len(all):
			return "", fmt.Errorf("Invalid `view_range`: %s. Its second element `%d` should be smaller than the number of lines in the file: `%d`", shown, final, len(all))
		case final != -1 && final < init:
			return "", fmt.Errorf("Invalid `view_range`: %s. Its second element `%d` should be larger or equal than its first `%d`", shown, final, init)
		}
		first = init
		if final == -1 {
			lines = all[init-1:]
		} else {
			lines = all[init-1 : final]
		}
		prompt += fmt.Sprintf(" with view_range=[%d, %d]", init, final)
	}
	var b strings.Builder
	for i, l := range lines {
		if i > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "%6d  %s", first+i, l)
	}
	return clip(prompt+":\n"+b.String()+"\n", max), nil
}

// list is upstream's listDirectory: non-hidden entries (node_modules and
// __pycache__ left out too) two levels deep, types followed through
// symlinks, sorted by path in UTF-16 code unit order.
func (t *tool) list(ctx context.Context, target fsobserve.Target) (string, error) {
	rows := []string{"d\t" + target.Display}
	var visit func(dir fsobserve.Target, depth int) error
	visit = func(dir fsobserve.Target, depth int) error {
		ents, err := os.ReadDir(dir.Key)
		if err != nil {
			return fsobserve.Errorf(fsobserve.CodeIOError, "cannot list \"%s\": %v", dir.Display, err)
		}
		for _, e := range ents {
			if err := ctx.Err(); err != nil {
				return fsobserve.ErrAborted(err)
			}
			n := e.Name()
			if strings.HasPrefix(n, ".") || n == "node_modules" || n == "__pycache__" {
				continue
			}
			child, err := t.cfg.FS.Resolve(filepath.Join(dir.Display, n), "")
			if err != nil {
				return err
			}
			info, exists, err := t.cfg.FS.Stat(child)
			if err != nil {
				return err
			}
			kind := "?"
			switch {
			case exists && info.Kind == fsobserve.KindDir:
				kind = "d"
			case exists && info.Kind == fsobserve.KindFile:
				kind = "f"
			}
			rows = append(rows, kind+"\t"+child.Display)
			if kind == "d" && depth < 2 {
				if err := visit(child, depth+1); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if err := visit(target, 1); err != nil {
		return "", err
	}
	sort.SliceStable(rows, func(i, j int) bool {
		return unitsLess(rows[i][strings.IndexByte(rows[i], '\t')+1:], rows[j][strings.IndexByte(rows[j], '\t')+1:])
	})
	listing := clip(strings.Join(rows, "\n")+"\n", t.cfg.MaxOutputChars)
	return fmt.Sprintf("Here're the files and directories up to 2 levels deep in %s, excluding hidden items, node_modules, and Python cache directories:\n%s\n", target.Display, listing), nil
}

// unitsLess compares as JavaScript's < on strings: by UTF-16 code units.
func unitsLess(a, b string) bool {
	ua, ub := utf16.Encode([]rune(a)), utf16.Encode([]rune(b))
	for i := 0; i < len(ua) && i < len(ub); i++ {
		if ua[i] != ub[i] {
			return ua[i] < ub[i]
		}
	}
	return len(ua) < len(ub)
}

func (t *tool) create(ctx context.Context, call *pipeline.Call, a args) (string, error) {
	content, err := required(a.FileText, "file_text", "create", true)
	if err != nil {
		return "", err
	}
	pol, err := t.policy(call)
	if err != nil {
		return "", err
	}
	target, err := t.resolve(a.Path)
	if err != nil {
		return "", err
	}
	if _, exists, err := t.cfg.FS.Stat(target); err != nil {
		return "", err
	} else if exists {
		return "", fmt.Errorf("File already exists at: %s. Cannot overwrite files using command `create`.", target.Display)
	}
	intent := fsobserve.WriteIntent{Kind: fsobserve.CreateIfAbsent}
	if t.cfg.Observations != nil {
		intent = t.cfg.Observations.WriteIntent(call.SessionID(), target.Key)
	}
	if err := t.write(ctx, call, pol, target, content, intent); err != nil {
		return "", err
	}
	return "New file created successfully at: " + target.Display, nil
}

// editIntent is the edit's version guard from the observation policy (nil
// without one: the version the edit's own stat reads).
func (t *tool) editIntent(call *pipeline.Call, target fsobserve.Target) (*fsobserve.EditGuard, error) {
	if t.cfg.Observations == nil {
		return nil, nil
	}
	g, err := t.cfg.Observations.EditIntent(call.SessionID(), target.Key, target.Display)
	if err != nil {
		return nil, err
	}
	return &g, nil
}

// guarded is the write intent of an edit: the observed version, else the
// version of the edit's own stat.
func guarded(g *fsobserve.EditGuard, info fsobserve.Info) fsobserve.WriteIntent {
	if g != nil {
		return fsobserve.WriteIntent{Kind: fsobserve.ReplaceIfVersion, Version: g.Version}
	}
	return fsobserve.WriteIntent{Kind: fsobserve.ReplaceIfVersion, Version: info.Version}
}

func (t *tool) replace(ctx context.Context, call *pipeline.Call, a args) (string, error) {
	pol, err := t.policy(call)
	if err != nil {
		return "", err
	}
	target, err := t.resolve(a.Path)
	if err != nil {
		return "", err
	}
	g, err := t.editIntent(call, target)
	if err != nil {
		return "", err
	}
	old, err := required(a.OldStr, "old_str", "str_replace", false)
	if err != nil {
		return "", err
	}
	newValue := ""
	if a.NewStr != nil {
		newValue = *a.NewStr
	}
	info, err := t.statExisting(call, target, "str_replace")
	if err != nil {
		return "", err
	}
	if info.Kind != fsobserve.KindFile {
		return "", fsobserve.Errorf(fsobserve.CodeNotRegularFile, "cannot edit \"%s\": not a regular file", target.Display)
	}
	before, err := t.cfg.FS.ReadText(ctx, target)
	if err != nil {
		return "", err
	}
	offsets := matchOffsets(before, old)
	switch {
	case len(offsets) == 0:
		return "", fsobserve.Errorf(fsobserve.CodeEditNotFound, "No replacement was performed, old_str `%s` did not appear verbatim in %s.", old, target.Display)
	case len(offsets) > 1:
		return "", fsobserve.Errorf(fsobserve.CodeAmbiguousEdit, "No replacement was performed. Multiple occurrences of old_str `%s` in lines [%s]. Please ensure it is unique", old, lineNumbers(before, offsets))
	}
	after := before[:offsets[0]] + newValue + before[offsets[0]+len(old):]
	if err := t.write(ctx, call, pol, target, after, guarded(g, info)); err != nil {
		return "", err
	}
	return fmt.Sprintf("The file %s has been edited successfully.", target.Display), nil
}

// matchOffsets are the byte offsets of search's non-overlapping matches.
func matchOffsets(content, search string) []int {
	var out []int
	for off := 0; ; {
		i := strings.Index(content[off:], search)
		if i < 0 {
			return out
		}
		out = append(out, off+i)
		off += i + len(search)
	}
}

// lineNumbers are the 1-based lines of offsets, joined as upstream joins
// them.
func lineNumbers(content string, offsets []int) string {
	parts := make([]string, len(offsets))
	for i, o := range offsets {
		parts[i] = fmt.Sprint(strings.Count(content[:o], "\n") + 1)
	}
	return strings.Join(parts, ", ")
}

func (t *tool) insert(ctx context.Context, call *pipeline.Call, a args) (string, error) {
	if a.InsertLine == nil {
		return "", errors.New("Parameter `insert_line` is required for command: insert")
	}
	value, err := required(a.NewStr, "new_str", "insert", true)
	if err != nil {
		return "", err
	}
	pol, err := t.policy(call)
	if err != nil {
		return "", err
	}
	target, err := t.resolve(a.Path)
	if err != nil {
		return "", err
	}
	g, err := t.editIntent(call, target)
	if err != nil {
		return "", err
	}
	info, err := t.statExisting(call, target, "insert")
	if err != nil {
		return "", err
	}
	if info.Kind != fsobserve.KindFile {
		return "", fsobserve.Errorf(fsobserve.CodeNotRegularFile, "cannot insert into \"%s\": not a regular file", target.Display)
	}
	text, err := t.cfg.FS.ReadText(ctx, target)
	if err != nil {
		return "", err
	}
	lines := strings.Split(text, "\n")
	n := *a.InsertLine
	if n != float64(int(n)) || n < 0 || int(n) > len(lines) {
		return "", fmt.Errorf("Invalid `insert_line` parameter: %s. It should be within the range of lines of the file: [0, %d]", jsjson.FormatNumber(n), len(lines))
	}
	at := int(n)
	after := strings.Join(append(append(append([]string(nil), lines[:at]...), strings.Split(value, "\n")...), lines[at:]...), "\n")
	if err := t.write(ctx, call, pol, target, after, guarded(g, info)); err != nil {
		return "", err
	}
	return fmt.Sprintf("The file %s has been edited successfully.", target.Display), nil
}
