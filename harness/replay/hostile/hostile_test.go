package hostile_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshsim/dshsim/harness"
	"github.com/dshsim/dshsim/harness/replay"
	"github.com/dshsim/dshsim/harness/replay/hostile"
	"github.com/dshsim/dshsim/harness/replay/projection"
	"github.com/dshsim/dshsim/harness/replay/recording"
	"github.com/dshsim/dshsim/harness/replay/recording/recordingtest"
)

func transcripts(t *testing.T) string {
	t.Helper()
	root, err := harness.FindRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(root, "transcripts")
}

var tgt = hostile.Target{Dir: "/tmp/host-dir", File: "/tmp/host-file", Shm: "/dev/shm/host-shm", Port: 4242, Mark: "DSHSIM_MARK=m1"}

// TestEveryCaseMakesARecordingThatAttacks: each case's copy loads as a
// recording (its seed as it is: the seed bounds are the replay's), and its
// model now calls what the case says: some call's arguments, a hook, the
// runner or the seed name the target's directory or file.
func TestEveryCaseMakesARecordingThatAttacks(t *testing.T) {
	names := map[string]bool{}
	for _, c := range hostile.Cases() {
		t.Run(c.Name, func(t *testing.T) {
			if names[c.Name] || !strings.HasPrefix(c.Name, "recording-") || c.Attack == "" || c.Mode == "" {
				t.Fatalf("a case needs a unique name starting recording-, an attack and a mode: %+v", c)
			}
			names[c.Name] = true
			dir := filepath.Join(t.TempDir(), c.Base)
			if err := c.Make(transcripts(t), dir, tgt); err != nil {
				t.Fatal(err)
			}
			rec := recordingtest.Load(t, dir)
			script, err := recording.Derive(rec)
			if err != nil {
				t.Fatal(err)
			}
			var aimed []string
			for _, r := range script.Replies {
				for _, tc := range r.ToolCalls {
					if !json.Valid([]byte(tc.Arguments)) {
						t.Errorf("call %s: arguments are not JSON: %s", tc.ID, tc.Arguments)
					}
					aimed = append(aimed, tc.Arguments)
				}
			}
			for _, f := range []string{"workspace/hooks.json", "landlock-run"} {
				if data, err := os.ReadFile(filepath.Join(dir, f)); err == nil {
					aimed = append(aimed, string(data))
				}
			}
			if link, err := os.Readlink(filepath.Join(dir, "workspace", "escape-link")); err == nil {
				aimed = append(aimed, link)
			}
			all := strings.Join(aimed, "\n")
			if !strings.Contains(all, strings.TrimPrefix(tgt.Dir, "/")) && !strings.Contains(all, strings.TrimPrefix(tgt.File, "/")) {
				t.Errorf("nothing of the copy aims at %s or %s:\n%s", tgt.Dir, tgt.File, all)
			}
		})
	}
	if len(names) < 10 {
		t.Fatalf("%d cases, want the two of the review and the ones beyond them", len(names))
	}
}

func TestMakeRefusesABadTarget(t *testing.T) {
	c, ok := hostile.Find("recording-stated-dfa")
	if !ok {
		t.Fatal("no recording-stated-dfa")
	}
	noShm := tgt
	noShm.Shm = ""
	for name, tc := range map[string]struct {
		t    hostile.Target
		want string
	}{
		"a quote in a path":             {hostile.Target{Dir: "/tmp/a'b", File: "/tmp/f", Port: 1, Mark: "A=b"}, "target Dir"},
		"a relative path":               {hostile.Target{Dir: "tmp", File: "/tmp/f", Port: 1, Mark: "A=b"}, "target Dir"},
		"no port":                       {hostile.Target{Dir: "/tmp/d", File: "/tmp/f", Mark: "A=b"}, "target port 0"},
		"a mark that is not NAME=value": {hostile.Target{Dir: "/tmp/d", File: "/tmp/f", Port: 1, Mark: "a b"}, "target mark"},
		"a /dev/shm attack without Shm": {noShm, "its target needs Shm"},
	} {
		t.Run(name, func(t *testing.T) {
			err := c.Make(transcripts(t), filepath.Join(t.TempDir(), "x"), tc.t)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v, want %q", err, tc.want)
			}
		})
	}
	under, _ := hostile.Find("recording-host-tmp")
	if err := under.Make(transcripts(t), filepath.Join(t.TempDir(), "x"), hostile.Target{Dir: "/var/tmp/d", File: "/var/tmp/f", Port: 1, Mark: "A=b"}); err == nil || !strings.Contains(err.Error(), "must lie there") {
		t.Fatalf("a host-/tmp attack aimed outside /tmp: %v", err)
	}
}

// TestCheck: a replay whose results lack a marker did not run the attack
// (an error, never a pass); a step that says it got through is a claim; a
// refused case must have been refused before anything ran.
func TestCheck(t *testing.T) {
	stated, _ := hostile.Find("recording-stated-dfa")
	seed, _ := hostile.Find("recording-seed-too-large")
	result := func(verdict, errText string, texts ...string) *replay.Result {
		r := &replay.Result{Name: "x", Verdict: verdict, Error: errText}
		for _, s := range texts {
			r.Got = append(r.Got, projection.Item{Kind: projection.KindResult, Fields: map[string]any{"text": s}})
		}
		return r
	}
	ran := "hook-done bash-done: Read-only file system"
	for name, tc := range map[string]struct {
		c      hostile.Case
		r      *replay.Result
		err    string
		claims int
	}{
		"ran, nothing claimed":        {stated, result(replay.Mismatch, "", ran), "", 0},
		"did not run":                 {stated, result(replay.Failed, "boom"), `no "hook-done"`, 0},
		"ran without a refusal":       {stated, result(replay.Mismatch, "", "hook-done bash-done"), `no "read-only file system|no such file or directory`, 0},
		"refused, not found":          {stated, result(replay.Mismatch, "", "hook-done bash-done: No such file or directory"), "", 0},
		"a step got through":          {stated, result(replay.Mismatch, "", ran, "bash-connected hook-sysctl-written"), "", 2},
		"refused before it ran":       {seed, result(replay.Failed, "seed workspace: /x/workspace/big.bin: 33554433 bytes, more than ... (dsh-replay -seed-max-file-bytes)"), "", 0},
		"refused after something ran": {seed, result(replay.Failed, "big.bin seed-max-file-bytes", "hook-done"), "was not refused before anything ran", 0},
		"not refused":                 {seed, result(replay.Mismatch, ""), "was not refused", 0},
	} {
		t.Run(name, func(t *testing.T) {
			claims, err := tc.c.Check(tc.r)
			if (err == nil) != (tc.err == "") || err != nil && !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("err %v, want %q", err, tc.err)
			}
			if len(claims) != tc.claims {
				t.Fatalf("claims %q, want %d", claims, tc.claims)
			}
		})
	}
}

func TestMakeNamesAMissingCall(t *testing.T) {
	c, _ := hostile.Find("recording-fs-write-absolute")
	c.Base = "text-turn" // no write call
	err := c.Make(transcripts(t), filepath.Join(t.TempDir(), "x"), tgt)
	if err == nil || !strings.Contains(err.Error(), "session.jsonl: no call 0 of write") {
		t.Fatalf("err %v", err)
	}
}
