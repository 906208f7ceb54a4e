package lsp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/tools/toolreg"
)

// Name is the tool's name.
const Name = "lsp"

// Description is its model-facing description (VERBATIM).
const Description = "Query a language server for precise code navigation. operation is one of goToDefinition, findReferences, goToImplementation, hover. line and character are one-based UTF-16 cursor coordinates. findReferences includes the declaration."

// PromptSection is its system-prompt section (VERBATIM).
const PromptSection = "Use search/read for ordinary navigation. Use lsp when textual matches are ambiguous or before a change requires precise definitions, implementations, or references. Positions are one-based line and character (UTF-16) at the cursor; an off-symbol position may return no results. findReferences always includes the declaration."

const parameters = `{"type":"object","properties":{"operation":{"type":"string","description":"goToDefinition, findReferences, goToImplementation, or hover.","enum":["goToDefinition","findReferences","goToImplementation","hover"]},"file_path":{"type":"string","description":"The source file to query, relative to the workspace or absolute."},"line":{"type":"number","description":"One-based line of the cursor."},"character":{"type":"number","description":"One-based UTF-16 column of the cursor."}},"required":["operation","file_path","line","character"]}`

// Server is one configured language server.
type Server struct {
	// Name labels it; Command is its argv, run in the workspace.
	Name    string
	Command []string
	// Extensions are the file extensions it serves (".ts").
	Extensions []string
}

// ConfineFunc wraps a server's argv in the sandbox (nil: run as it is),
// and returns the descriptors the wrapped argv names, which the server
// inherits as 3, 4, ... (a confinement's own, such as the workspace bwrap
// binds: sandbox.ConfinedArgv.Inherit); the tool closes them once the
// server started.
type ConfineFunc func(ctx context.Context, argv []string) ([]string, []*os.File, error)

// Config configures the tool.
type Config struct {
	// Workspace is the directory the servers run in, relative paths
	// resolve against and locations are shown relative to (absolute).
	Workspace string
	Servers   []Server
	// MaxLocations bounds the locations shown (default 20).
	MaxLocations int
	// Confine wraps each server's argv (nil: unconfined, as upstream).
	Confine ConfineFunc
	// Timeout bounds one request (default 30 s).
	Timeout time.Duration
	// Env is the servers' environment (nil: PATH and HOME of this process).
	Env []string
}

// Tool is the lsp tool with its running servers.
type Tool struct {
	cfg     Config
	mu      sync.Mutex
	clients map[string]*client
}

// New returns lsp's registration (its tool:lsp prompt section, order 107;
// Close stops the servers); servers start on first use.
func New(cfg Config) ([]toolreg.Tool, error) {
	t, err := build(cfg)
	if err != nil {
		return nil, err
	}
	return []toolreg.Tool{{Def: t.definition(), Close: t.Close,
		Section: &toolreg.Section{Name: "tool:lsp", Order: 107, Text: PromptSection}}}, nil
}

// build validates cfg and returns the tool.
func build(cfg Config) (*Tool, error) {
	if !filepath.IsAbs(cfg.Workspace) {
		return nil, fmt.Errorf("tool-lsp: workspace %q must be an absolute path", cfg.Workspace)
	}
	for _, s := range cfg.Servers {
		if len(s.Command) == 0 {
			return nil, fmt.Errorf("tool-lsp: server %q has no command", s.Name)
		}
	}
	if cfg.MaxLocations <= 0 {
		cfg.MaxLocations = 20
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 30 * time.Second
	}
	if cfg.Env == nil {
		cfg.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}
	}
	return &Tool{cfg: cfg, clients: map[string]*client{}}, nil
}

// definition is the pipeline tool.
func (t *Tool) definition() pipeline.Tool {
	return pipeline.Tool{Name: Name, Description: Description, Parameters: json.RawMessage(parameters), Run: t.run, ConcurrencySafe: true}
}

// Close stops every server.
func (t *Tool) Close() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	for name, c := range t.clients {
		c.close()
		delete(t.clients, name)
	}
	return nil
}

var methods = map[string]string{
	"goToDefinition":     "textDocument/definition",
	"findReferences":     "textDocument/references",
	"goToImplementation": "textDocument/implementation",
	"hover":              "textDocument/hover",
}

type args struct {
	Operation string  `json:"operation"`
	FilePath  string  `json:"file_path"`
	Line      float64 `json:"line"`
	Character float64 `json:"character"`
}

func (t *Tool) run(ctx context.Context, call *pipeline.Call) (pipeline.Output, error) {
	var a args
	if err := call.DecodeArgs(&a); err != nil {
		return pipeline.Output{}, errors.New(`"arguments" must be an object`)
	}
	if strings.TrimSpace(a.FilePath) == "" {
		return pipeline.Output{}, errors.New("file_path must be a non-empty string")
	}
	for _, f := range []struct {
		name string
		v    float64
	}{{"line", a.Line}, {"character", a.Character}} {
		if f.v < 1 || f.v != float64(int64(f.v)) {
			return pipeline.Output{}, fmt.Errorf("%s must be a positive integer", f.name)
		}
	}
	path := a.FilePath
	if !filepath.IsAbs(path) {
		path = filepath.Join(t.cfg.Workspace, path)
	}
	path = filepath.Clean(path)
	srv, ok := t.serverFor(path)
	if !ok {
		return pipeline.Output{}, fmt.Errorf("no language server is configured for %q", a.FilePath)
	}
	text, err := os.ReadFile(path)
	if err != nil {
		return pipeline.Output{}, fmt.Errorf("cannot read %q: %v", a.FilePath, errors.Unwrap(err))
	}
	ctx, cancel := context.WithTimeout(ctx, t.cfg.Timeout)
	defer cancel()
	c, err := t.client(ctx, srv)
	if err != nil {
		return pipeline.Output{}, fmt.Errorf("language server %q could not start: %v", srv.Name, err)
	}
	uri := fileURI(path)
	if err := c.sync(uri, languageID(path), string(text)); err != nil {
		return pipeline.Output{}, fmt.Errorf("language server %q: %v", srv.Name, err)
	}
	params := map[string]any{
		"textDocument": map[string]string{"uri": uri},
		"position":     map[string]int64{"line": int64(a.Line) - 1, "character": int64(a.Character) - 1},
	}
	if a.Operation == "findReferences" {
		params["context"] = map[string]bool{"includeDeclaration": true}
	}
	res, err := c.request(ctx, methods[a.Operation], params)
	if err != nil {
		return pipeline.Output{}, fmt.Errorf("language server %q: %v", srv.Name, err)
	}
	var out string
	if a.Operation == "hover" {
		out = renderHover(res)
	} else {
		locs, err := parseLocations(res)
		if err != nil {
			return pipeline.Output{}, fmt.Errorf("language server %q: %v", srv.Name, err)
		}
		out = t.renderLocations(locs)
	}
	return pipeline.Output{Content: []pipeline.Block{pipeline.TextBlock(out)}}, nil
}

func (t *Tool) serverFor(path string) (Server, bool) {
	ext := filepath.Ext(path)
	for _, s := range t.cfg.Servers {
		for _, e := range s.Extensions {
			if e == ext {
				return s, true
			}
		}
	}
	return Server{}, false
}

// client returns srv's running client, starting it on first use.
func (t *Tool) client(ctx context.Context, srv Server) (*client, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if c := t.clients[srv.Name]; c != nil {
		select {
		case <-c.done:
			delete(t.clients, srv.Name) // it died: start another
		default:
			return c, nil
		}
	}
	argv := srv.Command
	var files []*os.File
	if t.cfg.Confine != nil {
		var err error
		if argv, files, err = t.cfg.Confine(ctx, argv); err != nil {
			return nil, err
		}
	}
	c, err := start(ctx, argv, files, t.cfg.Workspace, fileURI(t.cfg.Workspace), t.cfg.Env)
	if err != nil {
		return nil, err
	}
	t.clients[srv.Name] = c
	return c, nil
}

// sync opens the document, or sends its whole new text when it changed.
func (c *client) sync(uri, lang, text string) error {
	c.mu.Lock()
	doc, open := c.opened[uri]
	c.mu.Unlock()
	switch {
	case !open:
		c.mu.Lock()
		c.opened[uri] = openDoc{1, text}
		c.mu.Unlock()
		return c.notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{"uri": uri, "languageId": lang, "version": 1, "text": text}})
	case doc.text != text:
		c.mu.Lock()
		c.opened[uri] = openDoc{doc.version + 1, text}
		c.mu.Unlock()
		return c.notify("textDocument/didChange", map[string]any{"textDocument": map[string]any{"uri": uri, "version": doc.version + 1}, "contentChanges": []any{map[string]string{"text": text}}})
	}
	return nil
}

func fileURI(path string) string {
	return (&url.URL{Scheme: "file", Path: filepath.ToSlash(path)}).String()
}

func languageID(path string) string {
	switch filepath.Ext(path) {
	case ".ts", ".mts", ".cts":
		return "typescript"
	case ".tsx":
		return "typescriptreact"
	case ".js", ".mjs", ".cjs":
		return "javascript"
	case ".go":
		return "go"
	case ".py":
		return "python"
	case ".rs":
		return "rust"
	}
	return strings.TrimPrefix(filepath.Ext(path), ".")
}

// Location is one result location (0-based, as the server sends it).
type Location struct {
	URI             string
	Line, Character int
}

// parseLocations reads Location, Location[], LocationLink[] or null.
func parseLocations(raw json.RawMessage) ([]Location, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	type pos struct {
		Line      int `json:"line"`
		Character int `json:"character"`
	}
	type rng struct {
		Start pos `json:"start"`
	}
	type item struct {
		URI                  string `json:"uri"`
		Range                *rng   `json:"range"`
		TargetURI            string `json:"targetUri"`
		TargetSelectionRange *rng   `json:"targetSelectionRange"`
	}
	var items []item
	if strings.HasPrefix(strings.TrimSpace(string(raw)), "{") {
		var one item
		if err := json.Unmarshal(raw, &one); err != nil {
			return nil, fmt.Errorf("malformed location: %v", err)
		}
		items = []item{one}
	} else if err := json.Unmarshal(raw, &items); err != nil {
		return nil, fmt.Errorf("malformed locations: %v", err)
	}
	out := make([]Location, 0, len(items))
	for _, it := range items {
		switch {
		case it.TargetURI != "" && it.TargetSelectionRange != nil:
			out = append(out, Location{it.TargetURI, it.TargetSelectionRange.Start.Line, it.TargetSelectionRange.Start.Character})
		case it.URI != "" && it.Range != nil:
			out = append(out, Location{it.URI, it.Range.Start.Line, it.Range.Start.Character})
		default:
			return nil, errors.New("a location has no uri and range")
		}
	}
	return out, nil
}

// renderLocations is "<path>:<line>:<character>" per location (1-based,
// the path relative to the workspace when inside it), at most
// MaxLocations, then "… <n> more location(s) omitted (limit <k>)."
func (t *Tool) renderLocations(locs []Location) string {
	if len(locs) == 0 {
		return "No results."
	}
	var lines []string
	for i, l := range locs {
		if i == t.cfg.MaxLocations {
			break
		}
		lines = append(lines, fmt.Sprintf("%s:%d:%d", t.display(l.URI), l.Line+1, l.Character+1))
	}
	if n := len(locs) - len(lines); n > 0 {
		noun := "location"
		if n > 1 {
			noun = "locations"
		}
		lines = append(lines, fmt.Sprintf("… %d more %s omitted (limit %d).", n, noun, t.cfg.MaxLocations))
	}
	return strings.Join(lines, "\n")
}

func (t *Tool) display(uri string) string {
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != "file" {
		return uri
	}
	rel, err := filepath.Rel(t.cfg.Workspace, u.Path)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return u.Path
	}
	return rel
}

// renderHover is the hover's contents as text ("No results." when empty).
func renderHover(raw json.RawMessage) string {
	var h struct {
		Contents json.RawMessage `json:"contents"`
	}
	if len(raw) == 0 || string(raw) == "null" || json.Unmarshal(raw, &h) != nil {
		return "No results."
	}
	var parts []string
	var collect func(v json.RawMessage)
	collect = func(v json.RawMessage) {
		var s string
		if json.Unmarshal(v, &s) == nil {
			parts = append(parts, s)
			return
		}
		var mc struct {
			Value string `json:"value"`
		}
		var list []json.RawMessage
		if json.Unmarshal(v, &list) == nil {
			for _, e := range list {
				collect(e)
			}
			return
		}
		if json.Unmarshal(v, &mc) == nil && mc.Value != "" {
			parts = append(parts, mc.Value)
		}
	}
	collect(h.Contents)
	if text := strings.TrimSpace(strings.Join(parts, "\n\n")); text != "" {
		return text
	}
	return "No results."
}
