package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"time"

	"github.com/dshsim/dshsim/harness/cmdline"
	"github.com/dshsim/dshsim/harness/replay"
	"github.com/dshsim/dshsim/harness/replay/htmlreport"
	"github.com/dshsim/dshsim/harness/replay/isolate"
	"github.com/dshsim/dshsim/harness/replay/junitreport"
	"github.com/dshsim/dshsim/harness/replay/recording"
)

// options are one dsh-replay invocation: the flags as parsed ([command]),
// then checked and resolved by validate before anything is replayed.
type options struct {
	update, refresh bool
	pattern, shard  string
	parallel        int
	timeout         time.Duration
	reportFlags
	containFlags
	inputBounds
	args           []string
	stdout, stderr io.Writer
	// progressAfter is how long a run lasts before a terminal shows
	// its progress ([progressAfter]; tests shorten it).
	progressAfter time.Duration

	// Resolved by validate.
	run  replay.RunOptions
	dirs []string // the selected recordings
}

// reportFlags are the flags of what the run writes: -json, -v, -html,
// -junit, -logs.
type reportFlags struct {
	json, verbose     bool
	html, junit, logs string
}

// containFlags are the flags of how each recording is confined and
// contained: -backend, -landlock-run, -strict-hooks, -trusted, -tmp-size
// and the bounds.
type containFlags struct {
	backend, launcher string
	strict, trusted   bool
	tmpSize           byteSize
	bounds            isolate.Bounds
}

// inputBounds are the bounds of what a recording may hold: its files and
// its workspace seed.
type inputBounds struct {
	seedBytes, seedFileBytes byteSize
	seedFiles                int
	recordingBytes           byteSize
}

// command is dsh-replay's flag set, parsing into o.
func command(o *options) cmdline.Command {
	fs := flag.NewFlagSet("dsh-replay", flag.ContinueOnError)
	fs.BoolVar(&o.json, "json", false, "write the report as one JSON document")
	fs.StringVar(&o.pattern, "run", "", "replay only the recordings whose name matches this `regexp`")
	fs.IntVar(&o.parallel, "parallel", runtime.NumCPU(), "recordings replayed at once")
	fs.StringVar(&o.shard, "shard", "", "replay shard `i/n` of the sorted recordings (1 <= i <= n)")
	fs.BoolVar(&o.update, "update", false, "rewrite each projection.expected.json from session.jsonl, then replay")
	fs.BoolVar(&o.refresh, "refresh", false, "rewrite what our stack produced in each recording (docs/record.md)")
	fs.StringVar(&o.html, "html", "", "also write a self-contained HTML report to `FILE`")
	fs.StringVar(&o.junit, "junit", "", "also write a JUnit XML report to `FILE`, for CI")
	fs.StringVar(&o.logs, "logs", "", "keep our session logs as `DIR`/<name>.session.jsonl")
	fs.DurationVar(&o.timeout, "timeout", 2*time.Minute, "time limit per recording")
	fs.BoolVar(&o.verbose, "v", false, "list every projected event, not only the first mismatch")
	fs.StringVar(&o.backend, "backend", "", "confine bash with this backend only: `bwrap` or landlock")
	fs.StringVar(&o.launcher, "landlock-run", "", "the landlock-run `binary` (default: beside dsh-replay)")
	fs.BoolVar(&o.strict, "strict-hooks", false, "fail closed where upstream's hooks fail open (docs/hooks.md)")
	fs.BoolVar(&o.trusted, "trusted", false, "where no containment can be made, replay on the host, uncontained")
	o.tmpSize = isolate.DefaultTmpSize
	fs.Var(&o.tmpSize, "tmp-size", "bound of each replay's /tmp, in `bytes` (suffix K, M or G)")
	o.seedBytes, o.seedFileBytes = recording.DefaultSeedMaxBytes, recording.DefaultSeedMaxFileBytes
	fs.Var(&o.seedBytes, "seed-max-bytes", "bound of a workspace/ seed, all files together, in `bytes`")
	fs.Var(&o.seedFileBytes, "seed-max-file-bytes", "bound of one file of a workspace/ seed, in `bytes`")
	fs.IntVar(&o.seedFiles, "seed-max-files", recording.DefaultSeedMaxFiles, "bound of the files and directories of a workspace/ seed")
	o.recordingBytes = recording.DefaultRecordingMaxBytes
	fs.Var(&o.recordingBytes, "recording-max-bytes", "bound of a recording's files, in `bytes` (a line: a quarter)")
	o.bounds.Register(fs)
	return cmdline.Command{Name: "dsh-replay", Flags: fs, Help: cmdline.HelpText(usage, fs)}
}

// Main runs dsh-replay with args (without the program name) and returns the
// exit status: the flags are parsed into options, then [run].
func Main(args []string, stdout, stderr io.Writer) int {
	return runMain(&options{stdout: stdout, stderr: stderr, progressAfter: progressAfter}, args)
}

// runMain is [Main] with the options' fixed fields given.
func runMain(o *options, args []string) int {
	cmd := command(o)
	return cmd.Main(args, o.stdout, o.stderr, func(args []string) error {
		o.args = args
		return run(cmd, o)
	})
}

// run validates o, then replays the selected recordings and reports.
func run(cmd cmdline.Command, o *options) error {
	if err := o.validate(cmd); err != nil {
		return err
	}
	if o.update {
		for _, d := range o.dirs {
			changed, err := replay.UpdateProjection(d)
			var defect *recording.Error
			switch {
			case errors.As(err, &defect):
				// A defect of the recording: its replay below reports
				// it, once, as the recording's error.
			case err != nil:
				fmt.Fprintf(o.stderr, "dsh-replay: update %s: %v\n", filepath.Base(d), err)
			}
			for _, f := range changed {
				fmt.Fprintf(o.stderr, "dsh-replay: updated %s\n", filepath.Join(d, f))
			}
		}
	}
	if err := replay.CheckIsolation(); err != nil {
		if !o.trusted {
			return err
		}
		fmt.Fprintf(o.stderr, "dsh-replay: -trusted: replaying uncontained, on the host: %v\n", err)
	}
	if o.refresh {
		return refresh(o)
	}
	var prog *progress
	if columns, ok := terminal(o.stderr); ok {
		prog = newProgress(o.stderr, columns, len(o.dirs), o.progressAfter)
		prog.hook(&o.run)
	}
	// SIGINT or SIGTERM cancels the replays (their commands are killed and
	// their workspaces removed); dsh-replay then exits 130 or 143.
	ctx, in := cmdline.WithInterrupt(context.Background())
	defer in.Stop()
	start := time.Now()
	results := replay.Run(ctx, o.dirs, o.run)
	elapsed := time.Since(start)
	if prog != nil {
		prog.stop()
	}
	if s := in.Signal(); s != nil {
		fmt.Fprintf(o.stderr, "dsh-replay: interrupted (%v): replays stopped, their workspaces removed\n", s)
		return cmdline.Status(in.Status(cmdline.ExitFailure))
	}
	return report(o, results, start, elapsed)
}

// refresh refreshes the selected recordings one after the other: one line
// per recording on stdout (refreshed, naming the files rewritten, or
// unchanged), a failure on stderr; it fails when any recording failed. A
// recording is written only after its complete run, all its files at once
// (replay.Refresh), so an interrupt leaves it as it was or refreshed whole.
func refresh(o *options) error {
	ctx, in := cmdline.WithInterrupt(context.Background())
	defer in.Stop()
	failed := 0
	for _, d := range o.dirs {
		r, err := replay.Refresh(ctx, d, o.run.Options)
		if r != nil && r.Recovered != "" {
			fmt.Fprintf(o.stderr, "dsh-replay: %s: %s\n", d, r.Recovered)
		}
		if s := in.Signal(); s != nil && err != nil {
			fmt.Fprintf(o.stderr, "dsh-replay: interrupted (%v) while refreshing %s: it was left as it was (the recordings before it are refreshed)\n", s, filepath.Base(d))
			return cmdline.Status(in.Status(cmdline.ExitFailure))
		}
		switch {
		case err != nil:
			failed++
			fmt.Fprintf(o.stderr, "dsh-replay: refresh %s: %v\n", filepath.Base(d), err)
		case len(r.Changed) == 0:
			fmt.Fprintf(o.stdout, "unchanged  %s\n", d)
		default:
			fmt.Fprintf(o.stdout, "refreshed  %s: %s\n", d, strings.Join(r.Changed, ", "))
		}
		if s := in.Signal(); s != nil {
			fmt.Fprintf(o.stderr, "dsh-replay: interrupted (%v) after refreshing %s whole: the recordings after it were not touched\n", s, filepath.Base(d))
			return cmdline.Status(in.Status(cmdline.ExitFailure))
		}
	}
	if failed > 0 {
		return fmt.Errorf("%d of %d recordings could not be refreshed (nothing written for them)", failed, len(o.dirs))
	}
	return nil
}

// report writes the HTML (-html) and JUnit (-junit) reports of a run that
// started at start and took elapsed, then the text or JSON report; it fails
// unless every recording matches.
func report(o *options, results []*replay.Result, start time.Time, elapsed time.Duration) error {
	if o.html != "" {
		if err := writeFile(o.html, func(w io.Writer) error { return htmlreport.Write(w, results) }); err != nil {
			return fmt.Errorf("-html: %w", err)
		}
	}
	if o.junit != "" {
		if err := writeFile(o.junit, func(w io.Writer) error { return junitreport.Write(w, results, start, elapsed) }); err != nil {
			return fmt.Errorf("-junit: %w", err)
		}
	}
	if o.json {
		if err := replay.WriteJSON(o.stdout, results); err != nil {
			return err
		}
	} else {
		replay.WriteText(o.stdout, results, o.verbose)
	}
	if !replay.AllMatch(results) {
		return cmdline.Status(cmdline.ExitFailure)
	}
	return nil
}

// validate checks the flags, the output paths and the recordings, and
// selects the recordings to replay: every problem is a usage error, except a
// selection that matches nothing ([cmdline.NoMatch]).
func (o *options) validate(cmd cmdline.Command) error {
	if len(o.args) == 0 {
		return cmdline.Usage("no DIR given (try: dsh-replay transcripts)")
	}
	if err := o.validateFlags(); err != nil {
		return err
	}
	if o.refresh && (o.json || o.html != "" || o.junit != "" || o.update) {
		return cmdline.Usage("-refresh writes recordings and reports per recording: it takes no -json, -html, -junit or -update")
	}
	for _, out := range []struct{ flag, path string }{{"-html", o.html}, {"-junit", o.junit}} {
		if out.path == "" {
			continue
		}
		if err := cmd.CheckOutFile(out.path); err != nil {
			return cmdline.Usage("%s %s: %v", out.flag, out.path, err)
		}
	}
	if o.logs != "" {
		if err := cmd.CheckOutDir(o.logs, false); err != nil {
			return cmdline.Usage("-logs %s: %v", o.logs, err)
		}
	}
	all, err := replay.Discover(o.args)
	if err != nil {
		return cmdline.Usage("%v", err)
	}
	if o.dirs = replay.Select(all, o.run); len(o.dirs) == 0 {
		return cmdline.NoMatch("recording", o.selection(), fmt.Sprintf("of %d found", len(all)))
	}
	if o.logs != "" {
		if a, b := sameName(o.dirs); a != "" {
			return cmdline.Usage("-logs %s: recordings %s and %s would both keep their log as %s; replay them in separate runs", o.logs, a, b, replay.LogName(a))
		}
	}
	return nil
}

// validateFlags checks the flag values and builds the replay options.
func (o *options) validateFlags() error {
	if o.timeout <= 0 {
		return cmdline.Usage("-timeout %v: want a positive duration (e.g. 2m)", o.timeout)
	}
	o.run = replay.RunOptions{Options: replay.Options{
		LogDir: o.logs, Timeout: o.timeout, LauncherPath: o.launcher, StrictHooks: o.strict, Trusted: o.trusted,
		TmpSize: int64(o.tmpSize), Bounds: o.bounds,
		Seed:      recording.SeedBounds{MaxBytes: int64(o.seedBytes), MaxFiles: o.seedFiles, MaxFileBytes: int64(o.seedFileBytes)},
		Recording: recording.Bounds{MaxBytes: int64(o.recordingBytes)},
	}, Parallel: o.parallel}
	if err := o.bounds.Check(); err != nil {
		return cmdline.Usage("%v", err)
	}
	for _, f := range []struct {
		name string
		v    int64
	}{{"tmp-size", int64(o.tmpSize)}, {"seed-max-bytes", int64(o.seedBytes)}, {"seed-max-file-bytes", int64(o.seedFileBytes)}, {"seed-max-files", int64(o.seedFiles)},
		{"recording-max-bytes", int64(o.recordingBytes)}} {
		if f.v <= 0 {
			return cmdline.Usage("-%s %d: want a positive bound", f.name, f.v)
		}
	}
	switch o.backend {
	case "":
	case "bwrap", "landlock":
		o.run.SandboxChain = []string{o.backend}
	default:
		return cmdline.Usage("-backend %q: want bwrap or landlock", o.backend)
	}
	if o.pattern != "" {
		re, err := regexp.Compile(o.pattern)
		if err != nil {
			return cmdline.Usage("-run: %v", err)
		}
		o.run.Run = re
	}
	if o.shard != "" {
		s, err := replay.ParseShard(o.shard)
		if err != nil {
			return cmdline.Usage("%v", err)
		}
		o.run.Shard = s
	}
	if o.parallel < 1 {
		return cmdline.Usage("-parallel must be at least 1")
	}
	return nil
}

// selection is what -run and -shard asked for, as the user gave it.
func (o *options) selection() string {
	var sel []string
	if o.pattern != "" {
		sel = append(sel, fmt.Sprintf("-run %q", o.pattern))
	}
	if o.shard != "" {
		sel = append(sel, "-shard "+o.shard)
	}
	return strings.Join(sel, " ")
}

// sameName returns two recordings of dirs with the same base name, or "".
func sameName(dirs []string) (string, string) {
	seen := map[string]string{}
	for _, d := range dirs {
		if prev, ok := seen[replay.LogName(d)]; ok {
			return prev, d
		}
		seen[replay.LogName(d)] = d
	}
	return "", ""
}

// writeFile creates path and writes it with write.
func writeFile(path string, write func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
