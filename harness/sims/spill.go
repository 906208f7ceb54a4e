package sims

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/dshsim/dshsim/harness"
	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/pipeline/session"
	"github.com/dshsim/dshsim/spill"
)

const (
	spillSimCap     = 300
	spillSimLines   = 400
	spillSimTool    = "print_logs"
	spillSimSession = "spill-sim-session"
)

func spillSimOutput() string {
	var b strings.Builder
	for i := 1; i <= spillSimLines; i++ {
		fmt.Fprintf(&b, "[%04d] worker-%d: processed batch %d of %d (%d records, ok)\n", i, i%4+1, i, spillSimLines, 100+i*7%53)
	}
	return b.String()
}

var spillRandRe = regexp.MustCompile(`/([0-9a-f]{12})-` + spillSimTool + `\.txt`)

// The spill sim: a constructed tool prints 400 log lines; the real spill
// policy (token budget 300, hooked outermost on post-execute of the real tool
// registry) saves the full text with the real store and bounds what the model
// gets.
func runSpill(env *harness.Env) (map[string][]byte, error) {
	root, err := spillRoot()
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(root)
	logDir, err := env.TempDir()
	if err != nil {
		return nil, err
	}
	full := spillSimOutput()
	text, err := spillCall(root, logDir, full)
	if err != nil {
		return nil, err
	}
	m := spillRandRe.FindStringSubmatch(text)
	if m == nil {
		return nil, fmt.Errorf("spill sim: no spill locator in the result %q", text)
	}
	locator := filepath.Join(root, spill.SessionDir(spillSimSession), m[1]+"-"+spillSimTool+".txt")
	fi, di, err := checkSpilled(locator, full)
	if err != nil {
		return nil, err
	}
	cost := spill.EstimateTokens(text)
	if cost > spillSimCap {
		return nil, fmt.Errorf("spill sim: the result costs %d tokens, over the cap %d", cost, spillSimCap)
	}

	norm := harness.NewNormalizer().Path(root, "<spill-root>").Literal("/"+m[1]+"-", "/<12 random hex>-")
	var b bytes.Buffer
	b.WriteString("spill: a result over the inline budget is saved whole; the model gets head, gap, tail and a notice\n")
	fmt.Fprintf(&b, "real: the tool registry with the spill policy hooked outermost on post-execute (maxInlineTokens %d), the local spill store (root <spill-root>)\n", spillSimCap)
	fmt.Fprintf(&b, "constructed: the tool %s printing %d log lines; the agent calling it (session %s)\n", spillSimTool, spillSimLines, spillSimSession)
	fmt.Fprintf(&b, "estimate: ceil(UTF-16 length / 4) + 4 tokens per text block\n\n")
	fmt.Fprintf(&b, "tool output: %d lines, %d bytes, %d estimated tokens > %d: spilled\n\n", strings.Count(full, "\n"), len(full), spill.EstimateTokens(full), spillSimCap)
	fmt.Fprintf(&b, "the model gets (%d bytes, %d estimated tokens <= %d):\n", len(text), cost, spillSimCap)
	for _, line := range strings.Split(norm.String(text), "\n") {
		b.WriteString("| " + line + "\n")
	}
	fmt.Fprintf(&b, "\nspill file: %s\n", norm.String(locator))
	fmt.Fprintf(&b, "  directory mode %04o, file mode %04o\n", di.Mode().Perm(), fi.Mode().Perm())
	fmt.Fprintf(&b, "  size %d bytes = full tool output %d bytes: identical content\n", fi.Size(), len(full))
	return map[string][]byte{"txt/spill.txt": b.Bytes()}, nil
}

// spillRoot makes a fixed-length spill root (like upstream's
// /tmp/dsh-acp-snap-<9hex>): the preview budget depends on the length of
// the path in the notice, so the root must not vary in length between
// machines.
func spillRoot() (string, error) {
	var rb [5]byte
	if _, err := rand.Read(rb[:]); err != nil {
		return "", err
	}
	root := "/tmp/dsh-sim-spill-" + hex.EncodeToString(rb[:])[:9]
	return root, os.Mkdir(root, 0o700)
}

// spillCall runs the constructed tool, whose output is full, once through
// a registry with the spill policy on a store at root, and returns the text
// the model gets; the policy must have spilled it.
func spillCall(root, logDir, full string) (string, error) {
	store, err := spill.NewStore(root)
	if err != nil {
		return "", err
	}
	var warnings []string
	policy, err := spill.New(spill.TokenConfig(spillSimCap), store, func(s string) { warnings = append(warnings, s) })
	if err != nil {
		return "", err
	}
	reg := pipeline.NewRegistry()
	policy.Hook(reg)
	if _, err := reg.Register(pipeline.Tool{
		Name: spillSimTool, Description: "constructed: prints 400 log lines", Parameters: json.RawMessage(`{"type":"object"}`),
		Run: func(ctx context.Context, call *pipeline.Call) (pipeline.Output, error) {
			return pipeline.Output{Content: []pipeline.Block{pipeline.TextBlock(full)}}, nil
		},
	}); err != nil {
		return "", err
	}
	log, err := session.Create(filepath.Join(logDir, "session.jsonl"), session.Header{ID: spillSimSession, Cwd: "/"})
	if err != nil {
		return "", err
	}
	defer log.Close()
	agent := &pipeline.Agent{ID: "agent", Session: log}
	res := reg.Execute(pipeline.NewCall("call-1", spillSimTool, json.RawMessage(`{}`), agent, nil))
	if res.IsError {
		return "", fmt.Errorf("spill sim: the call failed: %s", res.Text())
	}
	if len(warnings) > 0 {
		return "", fmt.Errorf("spill sim: the policy kept the result inline: %s", strings.Join(warnings, "; "))
	}
	return res.Text(), nil
}

// checkSpilled checks that the spill file at locator holds full and
// returns its and its directory's file info.
func checkSpilled(locator, full string) (fi, di os.FileInfo, err error) {
	saved, err := os.ReadFile(locator)
	if err != nil {
		return nil, nil, fmt.Errorf("spill sim: %w", err)
	}
	if fi, err = os.Stat(locator); err != nil {
		return nil, nil, err
	}
	if di, err = os.Stat(filepath.Dir(locator)); err != nil {
		return nil, nil, err
	}
	if string(saved) != full {
		return nil, nil, fmt.Errorf("spill sim: the spill file differs from the full output")
	}
	return fi, di, nil
}
