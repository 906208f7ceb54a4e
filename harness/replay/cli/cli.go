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

	"github.com/dshsim/dshsim/harness/cmdline"
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
%s                            Without the file, a recording named after a
                            scenario upstream's suite configures (bash-spill,
                            parallel-tool-calls, session-query-spill,
                            fs-write-overwrite-bounded,
                            partial-landlock-child-failure,
                            missing-sandbox-runner) gets that scenario's settings.
  projection.expected.json  the readable expected projection, written by -update
                            from session.jsonl; the comparison always runs
                            against session.jsonl, and this file, when present,
                            must equal the fresh projection (else: stale).

Exit status: 0 when every recording matches, 1 otherwise, 2 on usage errors
(one line on stderr naming the problem: a bad flag or value, a DIR that is
not a recording, two recordings of one name with -logs).

Flags:
`

// Main runs dsh-replay with args (without the program name) and returns the exit status.
func Main(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("dsh-replay", flag.ContinueOnError)
	var (
		jsonOut  = fs.Bool("json", false, "write the report as one JSON document to stdout")
		runPat   = fs.String("run", "", "replay only recordings whose name matches this regular expression")
		parallel = fs.Int("parallel", runtime.NumCPU(), "number of recordings replayed at once")
		shard    = fs.String("shard", "", "replay shard `i/n` of the sorted recordings (1 <= i <= n), for CI machines")
		update   = fs.Bool("update", false, "rewrite each recording's projection.expected.json from its session.jsonl, then replay (go test with DSHSIM_UPDATE=1 updates those of transcripts/ too)")
		htmlOut  = fs.String("html", "", "write a self-contained HTML report (timeline per recording, mismatches side by side) to `FILE`")
		logDir   = fs.String("logs", "", "keep our replayed session logs as `DIR`/<name>.session.jsonl (recordings must then have distinct names)")
		timeout  = fs.Duration("timeout", 2*time.Minute, "time limit per recording (positive)")
		verbose  = fs.Bool("v", false, "list every projected event of every recording, not only the first mismatch")
		backend  = fs.String("backend", "", "confine bash with this sandbox backend only (`bwrap` or landlock); default: the platform chain (bwrap, then landlock)")
		launcher = fs.String("landlock-run", "", "the landlock-run `binary` for -backend landlock (default: beside the dsh-replay executable)")
		strict   = fs.Bool("strict-hooks", false, "fail closed where upstream's hooks fail open: a hook config that cannot be loaded refuses every call, a hook that cannot run (not started, timed out, killed, exit 126/127) blocks its call")
	)
	cmd := cmdline.Command{Name: "dsh-replay", Flags: fs, Help: func(w io.Writer) {
		fmt.Fprintf(w, usage, wireHelp(), settingsHelp())
		cmdline.Defaults(fs, w)
	}}
	if code, ok := cmd.Parse(args, stdout, stderr); !ok {
		return code
	}
	if fs.NArg() == 0 {
		return cmd.Usagef(stderr, "no DIR given (try: dsh-replay transcripts)")
	}
	if *timeout <= 0 {
		return cmd.Usagef(stderr, "-timeout %v: want a positive duration (e.g. 2m)", *timeout)
	}
	opt := replay.RunOptions{Options: replay.Options{LogDir: *logDir, Timeout: *timeout, LauncherPath: *launcher, StrictHooks: *strict}, Parallel: *parallel}
	switch *backend {
	case "":
	case "bwrap", "landlock":
		opt.SandboxChain = []string{*backend}
	default:
		return cmd.Usagef(stderr, "-backend %q: want bwrap or landlock", *backend)
	}
	if *runPat != "" {
		re, err := regexp.Compile(*runPat)
		if err != nil {
			return cmd.Usagef(stderr, "-run: %v", err)
		}
		opt.Run = re
	}
	if *shard != "" {
		s, err := replay.ParseShard(*shard)
		if err != nil {
			return cmd.Usagef(stderr, "%v", err)
		}
		opt.Shard = s
	}
	if *parallel < 1 {
		return cmd.Usagef(stderr, "-parallel must be at least 1")
	}
	all, err := replay.Discover(fs.Args())
	if err != nil {
		return cmd.Usagef(stderr, "%v", err)
	}
	dirs := replay.Select(all, opt)
	if len(dirs) == 0 {
		return cmd.Usagef(stderr, "no recording selected (of %d found)", len(all))
	}
	if *logDir != "" {
		if a, b := sameName(dirs); a != "" {
			return cmd.Usagef(stderr, "-logs %s: recordings %s and %s would both keep their log as %s.session.jsonl; replay them in separate runs", *logDir, a, b, filepath.Base(a))
		}
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
	// SIGINT or SIGTERM cancels the replays (their commands are killed and
	// their workspaces removed); dsh-replay then exits 130 or 143.
	ctx, in := cmdline.WithInterrupt(context.Background())
	defer in.Stop()
	results := replay.Run(ctx, dirs, opt)
	if s := in.Signal(); s != nil {
		fmt.Fprintf(stderr, "dsh-replay: interrupted (%v): replays stopped, their workspaces removed\n", s)
		return in.Status(1)
	}
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

// sameName returns two recordings of dirs with the same base name, or "".
func sameName(dirs []string) (string, string) {
	seen := map[string]string{}
	for _, d := range dirs {
		if prev, ok := seen[filepath.Base(d)]; ok {
			return prev, d
		}
		seen[filepath.Base(d)] = d
	}
	return "", ""
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
