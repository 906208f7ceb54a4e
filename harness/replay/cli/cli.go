package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/dshsim/dshsim/harness/replay"
	"github.com/dshsim/dshsim/harness/replay/acpwire"
	"github.com/dshsim/dshsim/harness/replay/htmlreport"
	"github.com/dshsim/dshsim/harness/replay/recording"
)

const usage = `usage: dsh-replay [flags] DIR...

Replays recorded model sessions through the real tool stack and compares the
tool boundary with the recording. DIR is a recording (a directory holding
input.json, session.jsonl and stdout.expected.jsonl, optionally workspace/ and
replay.override.json) or a directory of recordings (e.g. transcripts/).

For each recording: the model's replies are rebuilt from session.jsonl (the
model is constructed from the recording); a fresh temporary workspace is seeded
from workspace/; the sandbox mode and approval policy come from the recording's
first runtime-context message; the steps of input.json are driven (prompt,
promptAndCancel: cancelled by the user once waitForFile exists, waitForTurnEnd);
approval prompts are answered from permissionAnswers in order (allow_once,
reject_once; an empty queue answers cancelled); every tool call runs through
the real stack (bash under the real sandbox, background jobs, read/write/edit
with observation, session_event_read/search, approval, escalation, spill,
rendering) and job notices reach the model as upstream's do. Our log of the
replay is compared with the recording per turn and in order: tool/call,
approval/asked, approval/decided, tool/result (text, isError, meta, error), the
runtime-context text, job notices and the turn/end reason, after normalising
{{cwd}}, UUIDs, spill locators and session_event_read times, as parsed JSON.
The schemas of the tools the stack composes are compared with
tool-schemas.expected.json in key order (other tools are named as not
modelled), and their system-prompt sections (tool:read, tool:bash, ...) must be
paragraphs of system-prompt.expected.md in order (the rest of the prompt is
upstream's application's). A recording also fails when flagged: the script was exhausted,
replies were left unconsumed, an answer kind was not offered, a compared line
of stdout.expected.jsonl differs, a tool schema or prompt section differs, the time limit stopped
it, or its projection.expected.json is stale. A bad recording (truncated line, unknown
event type, missing file, wrong field type) is an error naming file, line and
field; the other recordings still run.

Lines of stdout.expected.jsonl (the agent's ACP frames), per kind; a line of
a kind not listed fails the recording:
%s
Each replay runs in a child process of its own with a private /tmp (new mount
and PID namespaces; for a user without CAP_SYS_ADMIN inside a user namespace
that maps only that user), so upstream's fixed paths (the spill root
/tmp/dsh-acp-snap-<hash>, /tmp files a recording's commands use) exist once
per run: users and concurrent runs never meet, and nothing is left in /tmp.
Where such namespaces cannot be created, dsh-replay says so in one line and
replays nothing.

The report goes to stdout: one line per recording (its first mismatch below it
with field path, expected and got), then a summary line "ok: ..." or
"FAIL: ...". Progress goes to stderr: one self-rewriting line on a terminal,
one plain line per finished recording otherwise.

Files of ours beside a recording (both optional):
  dshsim.replay.json        how upstream's suite configured the scenario, where
                            the recording cannot say it; one JSON object, an
                            unknown key is an error. Keys (value; the upstream
                            scenario and knob it mirrors; what it does):
%s  projection.expected.json  the readable expected projection, written by -update
                            from session.jsonl; the comparison always runs
                            against session.jsonl, and this file, when present,
                            must equal the fresh projection (else: stale).

Exit status: 0 when every recording matches, 1 otherwise, 2 on usage errors.

Flags:
`

// Main runs dsh-replay with args (without the program name) and returns the exit status.
func Main(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("dsh-replay", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		jsonOut  = fs.Bool("json", false, "write the report as one JSON document to stdout")
		runPat   = fs.String("run", "", "replay only recordings whose name matches this regular expression")
		parallel = fs.Int("parallel", runtime.NumCPU(), "number of recordings replayed at once")
		shard    = fs.String("shard", "", "replay shard `i/n` of the sorted recordings (1 <= i <= n), for CI machines")
		update   = fs.Bool("update", false, "rewrite each recording's projection.expected.json from its session.jsonl, then replay (go test with DSHSIM_UPDATE=1 updates those of transcripts/ too)")
		htmlOut  = fs.String("html", "", "write a self-contained HTML report (timeline per recording, mismatches side by side) to `FILE`")
		logDir   = fs.String("logs", "", "keep our replayed session logs as `DIR`/<name>.session.jsonl")
		timeout  = fs.Duration("timeout", 2*time.Minute, "time limit per recording")
		verbose  = fs.Bool("v", false, "list every projected event of every recording, not only the first mismatch")
		backend  = fs.String("backend", "", "confine bash with this sandbox backend only (`bwrap` or landlock); default: the platform chain (bwrap, then landlock)")
		launcher = fs.String("landlock-run", "", "the landlock-run `binary` for -backend landlock (default: beside the dsh-replay executable)")
		strict   = fs.Bool("strict-hooks", false, "fail closed where upstream's hooks fail open: a hook config that cannot be loaded refuses every call, a hook that cannot run (not started, timed out, killed, exit 126/127) blocks its call")
	)
	fs.Usage = func() {
		fmt.Fprintf(stderr, usage, wireHelp(), settingsHelp())
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return 0
		}
		return 2
	}
	if fs.NArg() == 0 {
		fmt.Fprintln(stderr, "dsh-replay: no DIR given (try: dsh-replay transcripts)")
		return 2
	}
	opt := replay.RunOptions{Options: replay.Options{LogDir: *logDir, Timeout: *timeout, LauncherPath: *launcher, StrictHooks: *strict}, Parallel: *parallel}
	switch *backend {
	case "":
	case "bwrap", "landlock":
		opt.SandboxChain = []string{*backend}
	default:
		fmt.Fprintf(stderr, "dsh-replay: -backend %q: want bwrap or landlock\n", *backend)
		return 2
	}
	if *runPat != "" {
		re, err := regexp.Compile(*runPat)
		if err != nil {
			fmt.Fprintf(stderr, "dsh-replay: -run: %v\n", err)
			return 2
		}
		opt.Run = re
	}
	if *shard != "" {
		s, err := replay.ParseShard(*shard)
		if err != nil {
			fmt.Fprintf(stderr, "dsh-replay: %v\n", err)
			return 2
		}
		opt.Shard = s
	}
	if *parallel < 1 {
		fmt.Fprintln(stderr, "dsh-replay: -parallel must be at least 1")
		return 2
	}
	all, err := replay.Discover(fs.Args())
	if err != nil {
		fmt.Fprintf(stderr, "dsh-replay: %v\n", err)
		return 2
	}
	dirs := replay.Select(all, opt)
	if len(dirs) == 0 {
		fmt.Fprintf(stderr, "dsh-replay: no recording selected (of %d found)\n", len(all))
		return 2
	}
	if *update {
		for _, d := range dirs {
			changed, err := replay.UpdateProjection(d)
			switch {
			case err != nil:
				fmt.Fprintf(stderr, "dsh-replay: update %s: %v\n", filepath.Base(d), err)
			case changed:
				fmt.Fprintf(stderr, "dsh-replay: updated %s\n", filepath.Join(d, "projection.expected.json"))
			}
		}
	}
	if err := replay.CheckIsolation(); err != nil {
		fmt.Fprintf(stderr, "dsh-replay: %v\n", err)
		return 1
	}
	opt.Progress = progress(stderr, isTerminal(stderr))
	results := replay.Run(context.Background(), dirs, opt)
	if isTerminal(stderr) {
		fmt.Fprint(stderr, "\r\033[K")
	}

	if *htmlOut != "" {
		if err := writeHTML(*htmlOut, results); err != nil {
			fmt.Fprintf(stderr, "dsh-replay: -html: %v\n", err)
			return 1
		}
	}
	if *jsonOut {
		if err := replay.WriteJSON(stdout, results); err != nil {
			fmt.Fprintf(stderr, "dsh-replay: %v\n", err)
			return 1
		}
	} else {
		replay.WriteText(stdout, results, *verbose)
	}
	if replay.AllMatch(results) {
		return 0
	}
	return 1
}

func writeHTML(path string, results []*replay.Result) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := htmlreport.Write(f, results); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func progress(w io.Writer, tty bool) func(done, total int, r *replay.Result) {
	return func(done, total int, r *replay.Result) {
		line := fmt.Sprintf("[%d/%d] %s %s (%s)", done, total, r.Name, r.Verdict, r.Duration.Round(time.Millisecond))
		if tty {
			fmt.Fprintf(w, "\r\033[K%s", strings.TrimSpace(line))
			return
		}
		fmt.Fprintln(w, line)
	}
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}

// settingsHelp lists the keys of dshsim.replay.json for the usage text.
func settingsHelp() string {
	var b strings.Builder
	for _, k := range recording.SettingKeys {
		fmt.Fprintf(&b, "    %s: %s\n      mirrors %s\n      %s\n", k.Name, k.Value, k.Mirrors, k.Meaning)
	}
	return b.String()
}

// wireHelp lists the stdout line kinds: compared or why not.
func wireHelp() string {
	var b strings.Builder
	for _, k := range acpwire.Kinds {
		verdict := "not compared"
		if k.Compared {
			verdict = "compared"
		}
		fmt.Fprintf(&b, "    %s: %s: %s\n", k.Kind, verdict, k.Why)
	}
	return b.String()
}
