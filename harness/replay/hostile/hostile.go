package hostile

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/dshsim/dshsim/harness/replay"
	"github.com/dshsim/dshsim/harness/replay/projection"
	"github.com/dshsim/dshsim/harness/replay/recording"
	"github.com/dshsim/dshsim/sandbox"
	"github.com/dshsim/dshsim/sandbox/sandboxtest"
)

// Target is what the attacks aim at on the host.
type Target struct {
	// Dir is a host directory: the attacks make new files in it.
	Dir string
	// File is a host file holding the word "original": the attacks
	// overwrite or edit it.
	File string
	// Shm, when set, is a directory in the host's /dev/shm that the attacks
	// of a case with [Case.Shm] write too.
	Shm string
	// Port is a listener on the host's loopback (127.0.0.1) that no attack
	// may reach.
	Port int
	// Mark is an environment entry (NAME=value) every process an attack
	// leaves behind carries, so the host finds one still running.
	Mark string
	// Program is the attack program (package
	// harness/replay/hostile/testdata/attack, built), which the cases of
	// [RunCases] carry in the recording and run.
	Program string
}

// pathWord is what a target path may hold: it is spliced into shell text,
// JavaScript and JSON unquoted.
var pathWord = regexp.MustCompile(`^/[A-Za-z0-9/._-]+$`)

func (t Target) check() error {
	for _, p := range []struct{ name, v string }{{"Dir", t.Dir}, {"File", t.File}, {"Shm", t.Shm}} {
		if p.v != "" && !pathWord.MatchString(p.v) {
			return fmt.Errorf("hostile: target %s %q: want an absolute path of letters, digits and /._-", p.name, p.v)
		}
	}
	switch {
	case t.Dir == "" || t.File == "":
		return fmt.Errorf("hostile: a target needs Dir and File")
	case t.Port <= 0 || t.Port > 65535:
		return fmt.Errorf("hostile: target port %d", t.Port)
	case !regexp.MustCompile(`^[A-Z_][A-Z0-9_]*=[A-Za-z0-9._-]+$`).MatchString(t.Mark):
		return fmt.Errorf("hostile: target mark %q: want NAME=value", t.Mark)
	}
	return nil
}

// Expose makes Dir (and Shm) writable by everyone and File writable by
// everyone: only the containment may stand between a replay and them (a
// replay run by root runs as the host's nobody).
func (t Target) Expose() error {
	for _, p := range []struct {
		path string
		mode os.FileMode
	}{{t.Dir, 0o777}, {t.File, 0o666}, {t.Shm, 0o777}} {
		if p.path == "" {
			continue
		}
		if err := os.Chmod(p.path, p.mode); err != nil {
			return err
		}
	}
	return nil
}

// Case is one hostile recording.
type Case struct {
	// Name is the case's name: a row of the escape corpus.
	Name string
	// Attack says in a line what it tries.
	Attack string
	// Base is the upstream recording (a directory of transcripts/) it is
	// made from.
	Base string
	// Mode is the mode its attack runs in (stated, or approved by the
	// recording itself).
	Mode sandbox.Mode
	// Shm: its attack also writes Target.Shm. UnderTmp: Target.Dir and
	// Target.File must lie under the host's /tmp (the replay's /tmp is its
	// own).
	Shm, UnderTmp bool
	// Settle is how long the host waits after the replay returned before it
	// looks (a write a leftover process would make later).
	Settle time.Duration
	// Refused says the replay must refuse the recording before anything of
	// it runs.
	Refused bool
	// Fails says the replay must end in an error holding this text (the
	// attack stopped or killed the replay's own run stage), never a match
	// nor a mismatch.
	Fails string
	// ran are what the replay's results (and error) hold when the attack ran
	// to its end, or was refused as it must be (lower case).
	ran []string
	// program: the case carries and runs [Target.Program].
	program bool
	// edit turns the copy at dir against t.
	edit func(dir string, t Target) error
}

// Cases are the hostile recordings, by name.
func Cases() []Case { return cases }

// RunCases are the hostile recordings that attack the replay's own
// processes rather than the host: the run stage that produces the
// replay's result and PID 1 that passes it on (their targets need
// [Target.Program]).
func RunCases() []Case { return runCases }

// Find returns the case named name (of [Cases] or [RunCases]).
func Find(name string) (Case, bool) {
	for _, c := range append(cases[:len(cases):len(cases)], runCases...) {
		if c.Name == name {
			return c, true
		}
	}
	return Case{}, false
}

// Make writes the hostile copy of c's base recording (under transcripts)
// into dst, which must not exist, and turns it against t.
func (c Case) Make(transcripts, dst string, t Target) error {
	if err := t.check(); err != nil {
		return err
	}
	if c.Shm && t.Shm == "" {
		return fmt.Errorf("hostile: %s attacks /dev/shm: its target needs Shm", c.Name)
	}
	if c.program && t.Program == "" {
		return fmt.Errorf("hostile: %s runs the attack program: its target needs Program", c.Name)
	}
	if c.UnderTmp && !(strings.HasPrefix(t.Dir, "/tmp/") && strings.HasPrefix(t.File, "/tmp/")) {
		return fmt.Errorf("hostile: %s attacks the host's /tmp: its target's Dir and File must lie there", c.Name)
	}
	if _, err := os.Lstat(dst); err == nil {
		return fmt.Errorf("hostile: %s exists", dst)
	}
	if err := recording.CopyTree(filepath.Join(transcripts, c.Base), dst); err != nil {
		return fmt.Errorf("hostile: copy %s: %w", c.Base, err)
	}
	if err := c.edit(dst, t); err != nil {
		return fmt.Errorf("hostile: make %s from %s: %w", c.Name, c.Base, err)
	}
	return nil
}

// Check reads the replay of c's hostile copy: an error when the attack did
// not run to its end (a missing marker: a check that saw nothing proves
// nothing), or, for a refused case, when the replay ran anything; and the
// attack's own claims of a step that got through.
func (c Case) Check(r *replay.Result) (claims []string, err error) {
	out := Outcomes(r.Got)
	text := strings.ToLower(r.Error + "\n" + out)
	if c.Refused && (r.Verdict != replay.Failed || strings.TrimSpace(out) != "") {
		return nil, fmt.Errorf("%s: the replay was not refused before anything ran (%s)", c.Name, r.Summary())
	}
	if c.Fails != "" && (r.Verdict != replay.Failed || !strings.Contains(r.Error, c.Fails)) {
		return nil, fmt.Errorf("%s: the replay did not end in an error holding %q (%s)", c.Name, c.Fails, r.Summary())
	}
	for _, m := range c.ran {
		if !containsAny(text, strings.Split(m, "|")) {
			return nil, fmt.Errorf("%s: the attack did not run to its end: no %q in the replay's results (%s): %s", c.Name, m, r.Summary(), firstLines(r.Error+"\n"+out, 12))
		}
	}
	for line := range strings.Lines(out) {
		if strings.Contains(line, "REACHED") {
			claims = append(claims, "the replay's results say "+strings.TrimSpace(line))
		}
	}
	for _, who := range []string{"hook", "bash", "nested", "runner"} {
		for _, step := range []string{"connected", "sysctl-written"} {
			if strings.Contains(text, who+"-"+step) {
				claims = append(claims, "the replay's results say "+who+"-"+step)
			}
		}
	}
	return claims, nil
}

func containsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

func firstLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = append(lines[:n], "...")
	}
	return strings.Join(lines, "\n")
}

// Outcomes is what a replay's tools and hooks answered, one JSON line per
// tool or hook result (never the calls, which spell the attack).
func Outcomes(items []projection.Item) string {
	var b strings.Builder
	for _, it := range items {
		if it.Kind == projection.KindResult || it.Kind == projection.KindHook {
			data, _ := json.Marshal(it.Fields)
			b.Write(data)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// ProgramPackage is the attack program's import path.
const ProgramPackage = "github.com/dshsim/dshsim/harness/replay/hostile/testdata/attack"

// ProgramEnv names the attack program an outer test built for an inner run
// of the same test binary as another user, who cannot build one.
const ProgramEnv = "DSHSIM_TEST_ATTACK"

// Program builds the attack program for t (into t's temporary directory,
// running the go tool in the current directory, inside this module) and
// returns its path; in an inner run ($DSHSIM_TEST_ATTACK set) it returns
// that path.
func Program(t testing.TB) string {
	t.Helper()
	if p := os.Getenv(ProgramEnv); p != "" {
		return p
	}
	p, err := sandboxtest.Build("", t.TempDir(), "attack", ProgramPackage)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
