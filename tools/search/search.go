package search

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/dshsim/dshsim/internal/jsjson"
	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/tools/toolreg"
)

// Defaults (upstream's tool-fs-search).
const (
	DefaultGlobMaxResults  = 100
	DefaultGrepMaxMatches  = 250
	DefaultGrepMaxLineByte = 2000
	DefaultMetaMaxBytes    = 65536
	DefaultRawOutputMax    = 20000000
	DefaultStderrMaxBytes  = 64 * 1024
	DefaultGrace           = 3 * time.Second
)

// ErrorName is the class name of every search failure.
const ErrorName = "SearchError"

// Search failure codes.
const (
	CodeAborted         = "SEARCH_ABORTED"
	CodeFailed          = "SEARCH_FAILED"
	CodeInvalidPattern  = "SEARCH_INVALID_PATTERN"
	CodeRawOutputTooBig = "SEARCH_RAW_OUTPUT_OVERFLOW"
)

// Saved is a complete formatted result saved for the model (the spill
// store's answer).
type Saved struct {
	Locator, RetrievalHint string
}

// SaveFunc saves the complete formatted result of a capped top-level call
// under name; ok is false when nothing could be saved (no store, no owner,
// a failed write), and the result then says so.
type SaveFunc func(call *pipeline.Call, name, content string) (Saved, bool)

// Config configures glob and grep.
type Config struct {
	// Rg is the ripgrep program (default "rg" on PATH).
	Rg string
	// SampleOverCapGlobResults samples an over-cap glob result across the
	// top-level entries instead of taking its head.
	SampleOverCapGlobResults bool
	// GlobMaxResults, GrepMaxMatches and GrepMaxLineBytes are the inline caps;
	// MetaMaxBytes bounds the serialized meta; RawOutputMaxBytes the raw rg
	// stdout parsed (zero: upstream's defaults).
	GlobMaxResults, GrepMaxMatches, GrepMaxLineBytes, MetaMaxBytes, RawOutputMaxBytes int
	// Grace is the SIGTERM to SIGKILL delay of a cancelled search (default 3 s).
	Grace time.Duration
	// Save keeps the complete result of a capped top-level call (nil: the
	// result says it could not be saved).
	Save SaveFunc
	// DefaultWorkdir is the workdir of an agentless call (default the
	// process working directory).
	DefaultWorkdir string
}

func (c Config) withDefaults() Config {
	if c.Rg == "" {
		c.Rg = "rg"
	}
	for _, f := range []struct {
		v   *int
		def int
	}{{&c.GlobMaxResults, DefaultGlobMaxResults}, {&c.GrepMaxMatches, DefaultGrepMaxMatches}, {&c.GrepMaxLineBytes, DefaultGrepMaxLineByte},
		{&c.MetaMaxBytes, DefaultMetaMaxBytes}, {&c.RawOutputMaxBytes, DefaultRawOutputMax}} {
		if *f.v == 0 {
			*f.v = f.def
		}
	}
	if c.Grace == 0 {
		c.Grace = DefaultGrace
	}
	return c
}

func (c Config) validate() error {
	for _, f := range []struct {
		name string
		v    int
	}{{"globMaxResults", c.GlobMaxResults}, {"grepMaxMatches", c.GrepMaxMatches}, {"grepMaxLineBytes", c.GrepMaxLineBytes},
		{"searchMetaMaxBytes", c.MetaMaxBytes}, {"rawOutputMaxBytes", c.RawOutputMaxBytes}} {
		if f.v < 1 {
			return fmt.Errorf("tool-fs-search: %s must be a positive integer", f.name)
		}
	}
	return nil
}

// New returns the registrations of glob and grep, with their prompt
// sections (tool:glob, order 103, worded for sampling when configured;
// tool:grep, order 104).
func New(cfg Config) ([]toolreg.Tool, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	return []toolreg.Tool{
		{Def: cfg.globTool(), Section: &toolreg.Section{Name: "tool:glob", Order: 103, Text: GlobSection(cfg.SampleOverCapGlobResults)}},
		{Def: cfg.grepTool(), Section: &toolreg.Section{Name: "tool:grep", Order: 104, Text: GrepSection}},
	}, nil
}

func searchError(code, format string, args ...any) *pipeline.Error {
	return pipeline.NewErrorf(ErrorName, code, format, args...)
}

func aborted(tool string) error {
	return searchError(CodeAborted, "%s was aborted before completion (tool timeout or caller cancellation)", tool)
}

// run is one ripgrep run: stdout complete, noMatches for exit 1, the workdir.
type run struct {
	stdout    string
	noMatches bool
	workdir   string
}

// workdir is the calling session's cwd, else the configured default.
func (c Config) workdir(call *pipeline.Call) string {
	if a := call.Agent(); a != nil && a.Session != nil && a.Session.Header().Cwd != "" {
		return a.Session.Header().Cwd
	}
	if c.DefaultWorkdir != "" {
		return c.DefaultWorkdir
	}
	wd, _ := os.Getwd()
	return wd
}

var patternRejectedRE = regexp.MustCompile(`(?i)regex parse error|error parsing glob`)

// ripgrep runs rg --no-config argv in the call's workdir (no shell: every
// model value is one argv element), unconfined, as upstream's search tools
// run: exit 0 is results, exit 1 no results, anything else a failure.
func (c Config) ripgrep(ctx context.Context, call *pipeline.Call, tool string, argv []string) (run, error) {
	if ctx.Err() != nil {
		return run{}, aborted(tool)
	}
	wd := c.workdir(call)
	cmd := exec.Command(c.Rg, append([]string{"--no-config"}, argv...)...)
	cmd.Dir = wd
	cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var stdout, stderr capped
	stdout.max, stderr.max = c.RawOutputMaxBytes, DefaultStderrMaxBytes
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		return run{}, &pipeline.Error{Name: ErrorName, Code: CodeFailed, Message: tool + " could not start its search command (ripgrep launch failed)", Cause: err}
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var werr error
	select {
	case werr = <-done:
	case <-ctx.Done():
		terminate(cmd.Process.Pid, done, c.Grace)
		return run{}, aborted(tool)
	}
	state := cmd.ProcessState
	if ws, ok := state.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return run{}, searchError(CodeFailed, "%s search command was killed by signal %s", tool, signalName(ws.Signal()))
	}
	code := state.ExitCode()
	if werr != nil && code < 0 {
		return run{}, &pipeline.Error{Name: ErrorName, Code: CodeFailed, Message: tool + " could not start its search command (ripgrep launch failed)", Cause: werr}
	}
	if code != 0 && code != 1 {
		return run{}, classify(tool, code, stderr.String(), stderr.lost)
	}
	if stdout.lost {
		return run{}, searchError(CodeRawOutputTooBig, "%s produced more raw output than the subprocess seam retained within the %d-byte cap; narrow pattern, path, or include and retry", tool, c.RawOutputMaxBytes)
	}
	return run{stdout: stdout.String(), noMatches: code == 1, workdir: wd}, nil
}

// classify maps a failed run (exit other than 0 and 1) to upstream's texts.
func classify(tool string, code int, stderr string, lost bool) error {
	s := strings.TrimSpace(stderr)
	if s != "" && lost {
		s += " [stderr truncated]"
	}
	if patternRejectedRE.MatchString(s) {
		return searchError(CodeInvalidPattern, "%s pattern rejected by ripgrep: %s", tool, s)
	}
	if s != "" {
		return searchError(CodeFailed, "%s search failed (exit %d): %s", tool, code, s)
	}
	return searchError(CodeFailed, "%s search failed (exit %d)", tool, code)
}

// terminate ends a cancelled search's process group: SIGTERM, then SIGKILL
// after grace, and waits for the exit.
func terminate(pid int, done <-chan error, grace time.Duration) {
	syscall.Kill(-pid, syscall.SIGTERM)
	select {
	case <-done:
	case <-time.After(grace):
		syscall.Kill(-pid, syscall.SIGKILL)
		<-done
	}
}

func signalName(s syscall.Signal) string {
	names := map[syscall.Signal]string{syscall.SIGTERM: "SIGTERM", syscall.SIGKILL: "SIGKILL", syscall.SIGINT: "SIGINT", syscall.SIGSEGV: "SIGSEGV", syscall.SIGABRT: "SIGABRT", syscall.SIGPIPE: "SIGPIPE"}
	if n, ok := names[s]; ok {
		return n
	}
	return fmt.Sprintf("SIG%d", int(s))
}

// capped keeps at most max bytes and remembers that it lost some.
type capped struct {
	bytes.Buffer
	max  int
	lost bool
}

func (c *capped) Write(p []byte) (int, error) {
	if room := c.max - c.Len(); room < len(p) {
		c.lost = true
		if room > 0 {
			c.Buffer.Write(p[:room])
		}
		return len(p), nil
	}
	return c.Buffer.Write(p)
}

// toWorkdirRelative shows an absolute path inside workdir relative to it;
// anything else passes unchanged.
func toWorkdirRelative(path, workdir string) string {
	if !filepath.IsAbs(path) {
		return path
	}
	rel, err := filepath.Rel(workdir, path)
	if err != nil {
		return path
	}
	if rel == ".." || strings.HasPrefix(rel, "../") {
		return path
	}
	return rel
}

// previewLine bounds a matched line to max bytes at a UTF-8 boundary,
// marking a cut with " (line truncated)".
func previewLine(line string, max int) string {
	if len(line) <= max {
		return line
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(line[cut]) {
		cut--
	}
	return line[:cut] + " (line truncated)"
}

// capMeta drops trailing items until the serialized meta fits max bytes
// (keeping at least one), marking it truncated.
func capMeta[T any](items []T, fits func(items []T, truncated bool) bool) ([]T, bool) {
	if fits(items, false) {
		return items, false
	}
	for len(items) > 1 && !fits(items, true) {
		items = items[:len(items)-1]
	}
	return items, true
}

func marshal(v any) json.RawMessage {
	b, err := jsjson.Marshal(v)
	if err != nil {
		panic("tools/search: not encodable: " + err.Error())
	}
	return b
}

var errNotObject = errors.New(`"arguments" must be an object`)
