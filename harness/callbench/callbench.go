package callbench

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/dshsim/dshsim/harness/oracle"
	"github.com/dshsim/dshsim/pipeline/session"
)

// Call is one tool call of a script.
type Call struct {
	Name string
	Args map[string]any
}

// WriteScript writes a recording directory that holds only a constructed
// model script, encoded by package harness/oracle ([oracle.Script.Encode]):
// session.jsonl with the model's assistant/chunk events (each call in its
// own step of one turn, then a text step "DONE"), input.json
// (initialize, newSession, one prompt), an empty stdout.expected.jsonl and
// an empty workspace/.
func WriteScript(dir, prompt string, calls []Call) error {
	var steps []oracle.Step
	for i, c := range calls {
		args, err := json.Marshal(c.Args)
		if err != nil {
			return fmt.Errorf("call %d: %w", i+1, err)
		}
		steps = append(steps, oracle.Step{Calls: []oracle.Call{{Name: c.Name, Args: args}}})
	}
	s := &oracle.Script{Prompts: []string{prompt}, Turns: [][]oracle.Step{append(steps, oracle.Step{Text: "DONE"})}}
	files, err := s.Encode()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(dir, "workspace"), 0o755); err != nil {
		return err
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// Recording writes a recording directory whose session.jsonl is log, the
// raw session log of upstream's run of the script in script (its
// input.json and workspace/ are copied): a recording our replay drives as
// the model script, upstream's results beside it.
func Recording(dir, script string, log []byte) error {
	if err := os.MkdirAll(filepath.Join(dir, "workspace"), 0o755); err != nil {
		return err
	}
	input, err := os.ReadFile(filepath.Join(script, "input.json"))
	if err != nil {
		return err
	}
	for name, data := range map[string][]byte{"session.jsonl": log, "input.json": input, "stdout.expected.jsonl": nil} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// Timed is one call's time in a session log.
type Timed struct {
	CallID string
	// Took is the tool/result event's time minus the tool/call event's
	// (milliseconds in the log).
	Took time.Duration
	// Text is the result's text.
	Text string
}

// CallTimes reads the calls of tool name from a session log, in log order
// of their tool/call events: each call's time from tool/call to its
// tool/result. A tool/call without a result, or a line that is not an
// event, is an error naming the line.
func CallTimes(log []byte, name string) ([]Timed, error) {
	type event struct {
		Type string `json:"type"`
		Time int64  `json:"time"`
		Data struct {
			CallID  string `json:"callId"`
			Name    string `json:"name"`
			Message struct {
				Source struct {
					CallID string `json:"callId"`
				} `json:"source"`
				Content []struct {
					Content []struct {
						Text string `json:"text"`
					} `json:"content"`
				} `json:"content"`
			} `json:"message"`
		} `json:"data"`
	}
	var order []string
	start, out := map[string]int64{}, map[string]Timed{}
	sc := bufio.NewScanner(bytes.NewReader(log))
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for n := 1; sc.Scan(); n++ {
		var e event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			return nil, fmt.Errorf("session log line %d: %v", n, err)
		}
		switch {
		case e.Type == session.KindToolCall && e.Data.Name == name:
			start[e.Data.CallID] = e.Time
			order = append(order, e.Data.CallID)
		case e.Type == session.KindToolResult:
			id := e.Data.Message.Source.CallID
			t0, ok := start[id]
			if !ok {
				continue
			}
			var text []string
			for _, c := range e.Data.Message.Content {
				for _, b := range c.Content {
					text = append(text, b.Text)
				}
			}
			out[id] = Timed{CallID: id, Took: time.Duration(e.Time-t0) * time.Millisecond, Text: strings.Join(text, "")}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	var res []Timed
	for _, id := range order {
		t, ok := out[id]
		if !ok {
			return nil, fmt.Errorf("session log: %s call %s has no tool/result", name, id)
		}
		res = append(res, t)
	}
	return res, nil
}

// hostHook is the agent plugin that answers the sandbox provider's bwrap
// probe false through the provider's own test hook (internals.probeBwrap),
// as on a host without a usable bwrap: upstream's chain then selects its
// Landlock launcher.
const hostHook = `// Written by dshsim's callbench: upstream's sandbox provider on a host without bwrap.
export const name = "landlock-host";
export const inject = ["sandbox"];
export function apply(ctx) { ctx.sandbox.internals.probeBwrap = () => false; }
`

// sandboxEntry is the snapshot overlay's sandbox provider entry; its
// config block (up to the next entry) is what LandlockAgent removes: the
// runner that runs the command unconfined (passthroughRunner), or with
// PROBE_RUNNER=missing a runner that does not exist.
const (
	sandboxEntry      = "- id: sandbox\n  name: '@deepseek-ai/dsh-sandbox-local'\n"
	passthroughRunner = "passthrough-runner"
)

// LandlockAgent writes into dir (made if missing) the oracle's agent with
// upstream's own sandbox chain on a host without bwrap: the overlay's
// passthrough runner removed and the landlock-host plugin ([hostHook])
// mounted after the sandbox provider. node_modules links the oracle's.
func LandlockAgent(oracle, dir string) error {
	src := filepath.Join(oracle, "agent")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, f := range []string{"args.mjs", "bin.mjs", "run.mjs", "probe.test.mjs", "bash-alias.mjs", "package.json"} {
		b, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			return err
		}
	}
	cfg, err := os.ReadFile(filepath.Join(src, "cordis.snapshot.yml"))
	if err != nil {
		return err
	}
	cfg, err = landlockOverlay(cfg)
	if err != nil {
		return fmt.Errorf("%s: %w", filepath.Join(src, "cordis.snapshot.yml"), err)
	}
	if err := os.WriteFile(filepath.Join(dir, "cordis.snapshot.yml"), cfg, 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "landlock-host.mjs"), []byte(hostHook), 0o644); err != nil {
		return err
	}
	return os.Symlink(filepath.Join(oracle, "dsh08", "node_modules"), filepath.Join(dir, "node_modules"))
}

// landlockOverlay is the overlay cfg with the sandbox provider's config
// block (its passthrough runner) removed and the landlock-host plugin
// mounted right after the provider.
func landlockOverlay(cfg []byte) ([]byte, error) {
	start := bytes.Index(cfg, []byte(sandboxEntry))
	if start < 0 {
		return nil, fmt.Errorf("no sandbox provider entry %q", sandboxEntry)
	}
	body := start + len(sandboxEntry)
	// the block ends where the next entry's line starts (body-1 is the
	// newline that ends the provider's name line)
	end := len(cfg)
	if i := bytes.Index(cfg[body-1:], []byte("\n- id: ")); i >= 0 {
		end = body + i
	}
	if !bytes.Contains(cfg[body:end], []byte(passthroughRunner)) {
		return nil, errors.New("the sandbox provider's passthrough configuration is not there to replace")
	}
	out := append([]byte(nil), cfg[:body]...)
	out = append(out, "- id: landlock-host\n  name: './landlock-host.mjs'\n"...)
	return append(out, cfg[end:]...), nil
}
