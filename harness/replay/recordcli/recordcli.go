package recordcli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/dshsim/dshsim/harness/cmdline"
	"github.com/dshsim/dshsim/harness/replay"
	"github.com/dshsim/dshsim/harness/replay/isolate"
	"github.com/dshsim/dshsim/harness/replay/recording"
	"github.com/dshsim/dshsim/llm/deepseek"
)

// options are one dsh-record invocation.
type options struct {
	out, baseURL, model, provider, thinking, effort, keyEnv, launcher string
	frontend                                                          string
	timeout                                                           time.Duration
	toolNetwork                                                       bool
	bounds                                                            isolate.Bounds
	scenario                                                          string
	stdout, stderr                                                    io.Writer
}

const usage = `usage: dsh-record -o OUT [flags] SCENARIO

Records a session: a live model, over an OpenAI-compatible chat completions
server (DeepSeek by default; llama.cpp's server, vLLM, Ollama by -base-url),
drives our real tool stack with SCENARIO's input.json (its prompts, its
sandboxMode and approvalPolicy, its permissionAnswers; with none, the
approvals are asked at the terminal) and workspace/. The session is written
to OUT in upstream's recording layout (input.json, workspace/, session.jsonl,
stdout.expected.jsonl, projection.expected.json), through a temporary
directory beside OUT renamed into place only when complete: a rejected key, a
failed model call, a dropped or malformed stream or Ctrl-C leave nothing.

The session runs contained as a replay does (see dsh-replay -h): a root of
its own, no network for its tools (-tool-network gives them the host's),
the bounds of -memory, -processes, -file-size and -cpu-time. The API key is
read from the variable -key-env names (DEEPSEEK_API_KEY) and stays in this
process, which talks to the model and relays its chunks to the contained
session: nothing the session runs can reach it. It is never written.
dsh-replay OUT replays the recording.

-frontend headless writes the session as upstream's unattended path records
it (examples/headless-agent's layout: stream-json.expected.jsonl beside
session.jsonl, no ACP frames): SCENARIO is one task (one prompt step) and,
with no approval channel, has no permissionAnswers: each approval asked is
decided unavailable, as upstream's headless profile decides it, and nobody
is asked at the terminal.

Flags:
`

// command is dsh-record's flag set, parsing into o.
func command(o *options) cmdline.Command {
	fs := flag.NewFlagSet("dsh-record", flag.ContinueOnError)
	fs.StringVar(&o.out, "o", "", "write the recording to `OUT` (must not exist; its parent must)")
	fs.StringVar(&o.baseURL, "base-url", "", "the chat completions server's root `URL` (default: $"+deepseek.BaseURLEnv+", else "+deepseek.PublicBaseURL+")")
	fs.StringVar(&o.model, "model", "deepseek-v4-flash", "the model `name` sent to the server and named in the recording")
	fs.StringVar(&o.provider, "provider", replay.DefaultProvider, "the provider route the recording names the model by (upstream's replay overlay names deepseek-official)")
	fs.StringVar(&o.thinking, "thinking", "enabled", "thinking `mode` sent (enabled or disabled; empty: not sent)")
	fs.StringVar(&o.effort, "reasoning-effort", "max", "reasoning `effort` sent (off, low, high or max; empty: not sent; off sends thinking disabled)")
	fs.StringVar(&o.keyEnv, "key-env", deepseek.KeyEnv, "the environment `variable` holding the API key")
	fs.DurationVar(&o.timeout, "timeout", 30*time.Minute, "time limit of the whole session (positive)")
	fs.StringVar(&o.launcher, "landlock-run", "", "the landlock-run `binary` (default: beside the dsh-record executable)")
	fs.StringVar(&o.frontend, "frontend", string(recording.ACP), "the front end the recording is written as: `acp` (the ACP agent's layout) or headless (the unattended path's)")
	fs.BoolVar(&o.toolNetwork, "tool-network", false, "give the session's tools the host's network (by default they have none; the model is reached from dsh-record itself)")
	o.bounds.Register(fs)
	return cmdline.Command{Name: "dsh-record", Flags: fs, Help: cmdline.HelpText(usage, fs)}
}

// Main runs dsh-record with args (without the program name) and returns
// the exit status.
func Main(args []string, stdout, stderr io.Writer) int {
	o := &options{stdout: stdout, stderr: stderr}
	cmd := command(o)
	return cmd.Main(args, stdout, stderr, func(args []string) error {
		if len(args) != 1 {
			return cmdline.Usage("want exactly one SCENARIO (a directory with input.json), got %d arguments", len(args))
		}
		o.scenario = args[0]
		return run(cmd, o)
	})
}

// validate checks the options before anything starts: every problem is a
// usage error, -o's as every command words it ([cmdline.Command.CheckOutDir]).
func (o *options) validate(cmd cmdline.Command) error {
	switch {
	case o.out == "":
		return cmdline.Usage("-o OUT is required")
	case o.timeout <= 0:
		return cmdline.Usage("-timeout %v: want a positive duration", o.timeout)
	case o.thinking != "" && o.thinking != "enabled" && o.thinking != "disabled":
		return cmdline.Usage("-thinking %q: want enabled, disabled or empty", o.thinking)
	case o.effort != "" && o.effort != "off" && o.effort != "low" && o.effort != "high" && o.effort != "max":
		return cmdline.Usage("-reasoning-effort %q: want off, low, high, max or empty", o.effort)
	}
	if err := o.bounds.Check(); err != nil {
		return cmdline.Usage("%v", err)
	}
	if fi, err := os.Stat(o.scenario); err != nil || !fi.IsDir() {
		return cmdline.Usage("SCENARIO %s: not a directory", o.scenario)
	}
	switch err := cmdline.CheckInFile(filepath.Join(o.scenario, recording.InputFile)); {
	case errors.Is(err, cmdline.ErrNoSuchFile):
		return cmdline.Usage("SCENARIO %s: no %s (a scenario is a directory holding it)", o.scenario, recording.InputFile)
	case err != nil:
		return cmdline.Usage("SCENARIO %s: %s: %v", o.scenario, recording.InputFile, err)
	}
	if err := o.checkFrontend(); err != nil {
		return err
	}
	if _, err := os.Lstat(o.out); err == nil {
		return cmdline.Usage("-o %s exists: dsh-record writes a new recording and replaces nothing", o.out)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return cmdline.Usage("-o %s: %v", o.out, cmdline.Reason(err))
	}
	if err := cmd.CheckOutDir(o.out, false); err != nil {
		return cmdline.Usage("-o %s: %v", o.out, err)
	}
	if o.baseURL == "" {
		o.baseURL = os.Getenv(deepseek.BaseURLEnv)
	}
	if o.baseURL == "" {
		o.baseURL = deepseek.PublicBaseURL
	}
	return nil
}

// checkFrontend checks -frontend, and that SCENARIO fits the headless path
// when it names it (replay.HeadlessInputError).
func (o *options) checkFrontend() error {
	switch recording.Frontend(o.frontend) {
	case recording.ACP:
		return nil
	case recording.Headless:
	default:
		return cmdline.Usage("-frontend %q: want acp or headless", o.frontend)
	}
	in, err := recording.LoadInput(o.scenario)
	if err != nil {
		return cmdline.Usage("SCENARIO %s: %v", o.scenario, err)
	}
	if err := replay.HeadlessInputError(in); err != nil {
		return cmdline.Usage("-frontend headless: SCENARIO %s: %v", o.scenario, err)
	}
	return nil
}

// run records SCENARIO into OUT.
func run(cmd cmdline.Command, o *options) error {
	if err := o.validate(cmd); err != nil {
		return err
	}
	ctx, in := cmdline.WithInterrupt(context.Background())
	defer in.Stop()
	err := replay.Record(ctx, o.scenario, o.out, replay.RecordOptions{
		BaseURL: o.baseURL, Model: o.model, Provider: o.provider, Thinking: o.thinking, ReasoningEffort: o.effort,
		KeyEnv: o.keyEnv, Timeout: o.timeout, LauncherPath: o.launcher, Stderr: o.stderr, ToolNetwork: o.toolNetwork, Bounds: o.bounds,
		Frontend: recording.Frontend(o.frontend),
	})
	// Record writes nothing unless the session completed, and then the
	// whole recording at once: a signal after that leaves it recorded.
	if s := in.Signal(); s != nil && err != nil {
		fmt.Fprintf(o.stderr, "dsh-record: interrupted (%v): the session was stopped, nothing written\n", s)
		return cmdline.Status(in.Status(cmdline.ExitFailure))
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(o.stdout, "recorded %s (dsh-replay %s replays it)\n", o.out, o.out)
	if s := in.Signal(); s != nil {
		fmt.Fprintf(o.stderr, "dsh-record: interrupted (%v) once the recording was written whole\n", s)
		return cmdline.Status(in.Status(cmdline.ExitFailure))
	}
	return nil
}
