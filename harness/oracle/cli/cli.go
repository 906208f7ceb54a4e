package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/dshsim/dshsim/harness/cmdline"
	"github.com/dshsim/dshsim/harness/oracle"
	"github.com/dshsim/dshsim/harness/oracle/diff"
	"github.com/dshsim/dshsim/harness/replay"
	"github.com/dshsim/dshsim/harness/replay/recording"
)

const name = "dsh-oracle"

const usage = `usage: dsh-oracle COMMAND [flags] [args]

Runs upstream's own code (the oracle DSHSIM_ORACLE names, installed by
harness/oracle/setup.sh DIR) against recordings and generated model scripts.
Every upstream run happens in a private /tmp; nothing is written in the
oracle or in the recordings it reads.

commands:
  replay [-o DIR] RECORDING...   upstream replays each recording (or each
                                 recording in a directory): MATCH or DIFF of
                                 stdout and session.jsonl; -o keeps run.mjs's
                                 files (the normalised logs compared) per name
  regen [-o DIR] [NAME...]       remake recordings from harness/oracle/gen
                                 (specs + settings.tsv; all when no NAME) into
                                 DIR/<name> (default testdata/replay/oracle),
                                 with NOTES.md; a recording upstream does not
                                 reproduce is reported and not written
  diff [-n N] [-seed S] ...      differential testing: N generated scripts
                                 through upstream and dsh-replay; mismatches
                                 shrunk; -keep writes the minimal cases into
                                 the tree (run from the repository root)
  bench [-rounds R] [DIR]        replay speed: ours and upstream's suite on the
                                 same recordings (default transcripts), side
                                 by side in one run

Run dsh-oracle COMMAND -h for a command's flags.
`

// Main runs dsh-oracle with args (without the program name) and returns the
// exit status.
func Main(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		return cmdline.Usagef(stderr, name, "no command (replay, regen, diff or bench)")
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		io.WriteString(stdout, usage)
		return 0
	case "replay":
		return replayMain(args[1:], stdout, stderr)
	case "regen":
		return regenMain(args[1:], stdout, stderr)
	case "diff":
		return diffMain(args[1:], stdout, stderr)
	case "bench":
		return benchMain(args[1:], stdout, stderr)
	}
	return cmdline.Usagef(stderr, name, "unknown command %q (replay, regen, diff or bench)", args[0])
}

// openOracle is the oracle of DSHSIM_ORACLE, or a usage error saying why not.
func openOracle() (*oracle.Oracle, error) {
	o, err := oracle.FromEnv()
	if err != nil {
		return nil, cmdline.Usage("%v", err)
	}
	return o, nil
}

func replayMain(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet(name+" replay", flag.ContinueOnError)
	out := fs.String("o", "", "keep run.mjs's files of each recording in `DIR`/<name> (DIR is made if missing)")
	cmd := cmdline.Command{Name: name + " replay", Flags: fs, Help: cmdline.HelpText("usage: dsh-oracle replay [-o DIR] RECORDING...\n\nUpstream's suite replays each recording with the settings it needs (SettingsOf).\n\n", fs)}
	return cmd.Main(args, stdout, stderr, func(args []string) error {
		if len(args) == 0 {
			return cmdline.Usage("no recording given")
		}
		if *out != "" {
			if err := cmd.CheckOutDir(*out, false); err != nil {
				return cmdline.Usage("-o %s: %v", *out, err)
			}
		}
		o, err := openOracle()
		if err != nil {
			return err
		}
		dirs, err := replay.Discover(args)
		if err != nil {
			return cmdline.Usage("%v", err)
		}
		ctx, in := cmdline.WithInterrupt(context.Background())
		defer in.Stop()
		return replayAll(ctx, o, dirs, *out, stdout)
	})
}

// replayAll runs upstream over dirs and prints one line each; any DIFF or
// error fails the run.
func replayAll(ctx context.Context, o *oracle.Oracle, dirs []string, out string, stdout io.Writer) error {
	failed := 0
	for _, d := range dirs {
		n := filepath.Base(d)
		rec, err := recording.Load(d)
		var set oracle.Settings
		if err == nil && rec.Frontend != recording.JSONRPC { // the SDK's compositions take no overlay switch
			set, err = oracle.SettingsOf(rec)
		}
		var res *oracle.Outcome
		if err == nil {
			res, err = o.Replay(ctx, d, oracle.Options{Settings: set, Frontend: oracleFrontend(rec.Frontend)})
		}
		switch {
		case err != nil:
			failed++
			fmt.Fprintf(stdout, "%-32s error: %v\n", n, err)
			continue
		case !res.Match():
			failed++
		}
		fmt.Fprintf(stdout, "%-32s %-24s %s  (%s)\n", n, res.Verdict(), set, res.Duration.Round(time.Millisecond))
		if out != "" {
			if err := res.WriteFiles(filepath.Join(out, n)); err != nil {
				return err
			}
		}
	}
	fmt.Fprintf(stdout, "%d recordings: %d MATCH, %d DIFF or error\n", len(dirs), len(dirs)-failed, failed)
	if failed > 0 {
		return cmdline.Status(cmdline.ExitFailure)
	}
	return nil
}

// oracleFrontend is the front end upstream replays a recording through:
// the goal and JSON-RPC front ends' own drivers for their recordings, else
// the ACP suite (a headless recording is not replayed here: the headless
// profile runs its own cases, see dsh-oracle diff -profile headless).
func oracleFrontend(fe recording.Frontend) recording.Frontend {
	if fe == recording.Goal || fe == recording.JSONRPC {
		return fe
	}
	return ""
}

func regenMain(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet(name+" regen", flag.ContinueOnError)
	var out outDirs
	fs.StringVar(&out.acp, "o", diff.RecordingsDir, "write each recording of gen/settings.tsv to `DIR`/<name>, replacing it")
	fs.StringVar(&out.headless, "headless-o", diff.HeadlessRecordingsDir, "write each recording of gen/headless.tsv (upstream's headless front end) to `DIR`/<name>, replacing it")
	gen := fs.String("gen", diff.GenDir, "the `DIR` holding settings.tsv, headless.tsv and specs/")
	notesOnly := fs.Bool("notes", false, "rewrite only each recording's NOTES.md from gen/ (no upstream run)")
	cmd := cmdline.Command{Name: name + " regen", Flags: fs, Help: cmdline.HelpText("usage: dsh-oracle regen [-o DIR] [-headless-o DIR] [-gen DIR] [NAME...]\n\nUpstream records each spec of gen/ (refresh), then replays its own recording as a check.\n\n", fs)}
	return cmd.Main(args, stdout, stderr, func(args []string) error {
		if err := cmd.CheckOutDir(out.acp, false); err != nil {
			return cmdline.Usage("-o %s: %v", out.acp, err)
		}
		specs, err := oracle.LoadSpecs(*gen)
		if err != nil {
			return cmdline.Usage("-gen: %v", err)
		}
		headless, err := oracle.LoadHeadlessSpecs(*gen)
		if err != nil {
			return cmdline.Usage("-gen: %v", err)
		}
		specs, err = selectSpecs(append(specs, headless...), args)
		if err != nil {
			return err
		}
		if slices.ContainsFunc(specs, func(s oracle.Spec) bool { return s.Headless }) {
			if err := cmd.CheckOutDir(out.headless, false); err != nil {
				return cmdline.Usage("-headless-o %s: %v", out.headless, err)
			}
		}
		if *notesOnly {
			return rewriteNotes(specs, out, stdout)
		}
		o, err := openOracle()
		if err != nil {
			return err
		}
		ctx, in := cmdline.WithInterrupt(context.Background())
		defer in.Stop()
		return regen(ctx, o, specs, out, stdout)
	})
}

// outDirs are where regen writes: the ACP specs' recordings, the
// headless specs'.
type outDirs struct{ acp, headless string }

// of is the directory of spec's recording.
func (d outDirs) of(s oracle.Spec) string {
	if s.Headless {
		return filepath.Join(d.headless, s.Name)
	}
	return filepath.Join(d.acp, s.Name)
}

// selectSpecs keeps the named specs (all when none is named).
func selectSpecs(specs []oracle.Spec, names []string) ([]oracle.Spec, error) {
	if len(names) == 0 {
		return specs, nil
	}
	byName := map[string]oracle.Spec{}
	for _, s := range specs {
		byName[s.Name] = s
	}
	var out []oracle.Spec
	for _, n := range names {
		s, ok := byName[n]
		if !ok {
			return nil, cmdline.NoMatch("spec", n, fmt.Sprintf("%d specs in settings.tsv", len(specs)))
		}
		out = append(out, s)
	}
	return out, nil
}

// regen records each spec (a headless one through upstream's headless
// front end); an unstable one is reported, not written.
func regen(ctx context.Context, o *oracle.Oracle, specs []oracle.Spec, out outDirs, stdout io.Writer) error {
	unstable := 0
	for _, s := range specs {
		record := o.Record
		if s.Headless {
			record = o.RecordHeadless
		}
		rec, err := record(ctx, s.Name, s.Script, oracle.Options{Settings: s.Settings})
		if err != nil {
			return fmt.Errorf("%s: %w", s.Name, err)
		}
		if !rec.Stable() {
			unstable++
			fmt.Fprintf(stdout, "%-32s NOT KEPT: upstream's replay of its own recording: %s\n", s.Name, rec.Check.Verdict())
			continue
		}
		if rec.Files[oracle.NotesFile], err = notesOf(s, rec); err != nil {
			return err
		}
		dir := out.of(s)
		if err := os.RemoveAll(dir); err != nil {
			return err
		}
		if err := rec.Write(dir); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%-32s recorded (%s)\n", s.Name, strings.TrimSpace(s.Settings.String()))
	}
	if unstable > 0 {
		return cmdline.Status(cmdline.ExitFailure)
	}
	return nil
}

// notesOf is the NOTES.md of spec's recording rec.
func notesOf(s oracle.Spec, rec *oracle.Recorded) ([]byte, error) {
	if s.Headless {
		return s.Notes().HeadlessMarkdown(), nil
	}
	in, err := inputOf(rec)
	if err != nil {
		return nil, err
	}
	return s.Notes().Markdown(in), nil
}

// rewriteNotes writes the NOTES.md of each spec's recording in out (a spec
// without a recording, one upstream does not reproduce, is skipped).
func rewriteNotes(specs []oracle.Spec, out outDirs, stdout io.Writer) error {
	for _, s := range specs {
		dir := out.of(s)
		notes := s.Notes().HeadlessMarkdown()
		in, err := oracle.ReadInput(dir)
		switch {
		case s.Headless:
			if _, err := os.Stat(dir); err != nil {
				continue
			}
		case errors.Is(err, fs.ErrNotExist):
			continue
		case err != nil:
			return err
		default:
			notes = s.Notes().Markdown(in)
		}
		if err := os.WriteFile(filepath.Join(dir, oracle.NotesFile), notes, 0o644); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%-32s NOTES.md\n", s.Name)
	}
	return nil
}
