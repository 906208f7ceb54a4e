package replay

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dshsim/dshsim/harness/replay/acpwire"
	"github.com/dshsim/dshsim/harness/replay/isolate"
	"github.com/dshsim/dshsim/harness/replay/projection"
	"github.com/dshsim/dshsim/harness/replay/recording"
)

// forgerName is a contained child that answers the bytes it is given: a
// child whose replay a recording took over, as the host sees it. Served from
// init, as every handler is (package isolate).
const forgerName = "replay-test-forger"

func init() {
	isolate.Serve(forgerName, func(_ context.Context, req []byte) ([]byte, error) { return req, nil })
}

// withChild makes run the host's way to its contained child for the rest
// of the test. Tests that call it run alone (never t.Parallel), as runChild
// is the package's.
func withChild(t *testing.T, run func(ctx context.Context, name string, req []byte, o isolate.Options) ([]byte, error)) {
	t.Helper()
	old := runChild
	runChild = run
	t.Cleanup(func() { runChild = old })
}

// honest replays dir through the real contained child and returns the
// child's response as it sent it.
func honest(t *testing.T, dir string, opt Options) []byte {
	t.Helper()
	var out []byte
	withChild(t, func(ctx context.Context, name string, req []byte, o isolate.Options) ([]byte, error) {
		b, err := isolate.Run(ctx, name, req, o)
		out = b
		return b, err
	})
	if r := Replay(context.Background(), dir, opt); r.Verdict == Failed || out == nil {
		t.Fatalf("the honest replay of %s: %s", dir, r.Summary())
	}
	return out
}

// forged replays dir with a child that answers out, through a real
// contained child and the bound the host sets on its answer.
func forged(t *testing.T, dir string, opt Options, out []byte) (*Result, *response) {
	t.Helper()
	withChild(t, func(ctx context.Context, _ string, _ []byte, o isolate.Options) ([]byte, error) {
		return isolate.Run(ctx, forgerName, out, o)
	})
	return replayIsolated(context.Background(), dir, opt)
}

// edit decodes an honest response, lets change forge it, and encodes it as
// the child's encoder would.
func edit(t *testing.T, out []byte, change func(r *response)) []byte {
	t.Helper()
	resp, err := decodeResponse(out)
	if err != nil {
		t.Fatalf("the honest response does not decode: %v", err)
	}
	change(resp)
	b, err := json.Marshal(resp)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// replaceOnce replaces the first old in out.
func replaceOnce(t *testing.T, out []byte, old, new string) []byte {
	t.Helper()
	if !bytes.Contains(out, []byte(old)) {
		t.Fatalf("the honest response holds no %q", old)
	}
	return bytes.Replace(out, []byte(old), []byte(new), 1)
}

// TestTheHostRefusesForgedResponses: a response the child forged, each in
// one way a recording that took the child over could, gives an error
// verdict naming what is wrong, never a match; the honest response, sent
// the same way, gives the honest verdict (so each refusal is the forgery's).
func TestTheHostRefusesForgedResponses(t *testing.T) {
	isolate.Require(t)
	mismatch := filepath.Join("..", "..", "testdata", "replay", "flagged", "changed-seed")
	withKids := filepath.Join("..", "..", "transcripts", "subagent-report")
	honestOf := map[string][]byte{mismatch: honest(t, mismatch, Options{}), withKids: honest(t, withKids, Options{})}
	for dir, want := range map[string]string{mismatch: Mismatch, withKids: Match} {
		if r, _ := forged(t, dir, Options{}, honestOf[dir]); r.Verdict != want {
			t.Fatalf("%s: the honest response sent back gives %s, want %s (%s)", dir, r.Verdict, want, r.Error)
		}
	}
	honestResp, err := decodeResponse(honestOf[mismatch])
	if err != nil {
		t.Fatal(err)
	}
	honestCmp := honestResp.Result.Comparison
	if honestCmp.Mismatched == 0 {
		t.Fatalf("%s matches: the forgeries below would prove nothing", mismatch)
	}
	tests := []struct {
		name, dir string
		forge     func(t *testing.T, out []byte) []byte
		want      string
	}{
		{"verdict flipped", mismatch, func(t *testing.T, out []byte) []byte {
			return edit(t, out, func(r *response) { r.Result.Verdict = Match })
		}, "it says match where its comparison and flags say mismatch"},
		{"verdict flipped and counts to match", mismatch, func(t *testing.T, out []byte) []byte {
			return edit(t, out, func(r *response) {
				r.Result.Verdict = Match
				r.Result.Comparison.Matched, r.Result.Comparison.Mismatched = r.Result.Comparison.Total, 0
			})
		}, "is not the recording's projection compared with its got side (" + counts(honestCmp) + ")"},
		{"got side made the expected one", mismatch, func(t *testing.T, out []byte) []byte {
			return edit(t, out, func(r *response) {
				r.Got = r.Expected
				r.Result.Comparison = projection.Compare(r.Expected, r.Got)
				r.Result.Verdict = Match
			})
		}, "its got side is not the projection of the log it sent"},
		{"expected side replaced", mismatch, func(t *testing.T, out []byte) []byte {
			return edit(t, out, func(r *response) {
				r.Expected = r.Got
				r.Result.Comparison = projection.Compare(r.Got, r.Got)
				r.Result.Verdict = Match
			})
		}, "its expected side is not the recording's (turn 1, tool/result"},
		{"name with ../", mismatch, func(t *testing.T, out []byte) []byte {
			return edit(t, out, func(r *response) { r.Result.Name = "../escaped" })
		}, `it names the recording "../escaped", which is "changed-seed"`},
		{"absolute log path", mismatch, func(t *testing.T, out []byte) []byte {
			return edit(t, out, func(r *response) { r.Result.LogPath = "/etc/cron.d/escaped" })
		}, `it names a kept log "/etc/cron.d/escaped"`},
		{"another directory", mismatch, func(t *testing.T, out []byte) []byte {
			return edit(t, out, func(r *response) { r.Result.Dir = "/" })
		}, `it names the directory "/"`},
		{"unknown field", mismatch, func(t *testing.T, out []byte) []byte {
			return replaceOnce(t, out, `{"Result":{`, `{"Result":{"Trusted":true,`)
		}, `undecodable: json: unknown field "Trusted"`},
		{"unknown top-level field", mismatch, func(t *testing.T, out []byte) []byte {
			return replaceOnce(t, out, `{"Result":`, `{"Verdict":"match","Result":`)
		}, `undecodable: json: unknown field "Verdict"`},
		{"wrong type", mismatch, func(t *testing.T, out []byte) []byte {
			return replaceOnce(t, out, `"verdict":"mismatch"`, `"verdict":true`)
		}, "undecodable: json: cannot unmarshal bool"},
		{"key in another case", mismatch, func(t *testing.T, out []byte) []byte {
			return replaceOnce(t, out, `"verdict":"mismatch"`, `"VERDICT":"mismatch"`)
		}, `not spelled as a response is, from byte`},
		{"key given twice", mismatch, func(t *testing.T, out []byte) []byte {
			return replaceOnce(t, out, `"verdict":"mismatch"`, `"verdict":"mismatch","verdict":"match"`)
		}, `not spelled as a response is, from byte`},
		{"field missing", mismatch, func(t *testing.T, out []byte) []byte {
			log := regexp.MustCompile(`"Log":"[^"]*",`).Find(out)
			return replaceOnce(t, out, string(log), "")
		}, `not spelled as a response is, from byte`},
		{"run facts missing", mismatch, func(t *testing.T, out []byte) []byte {
			return edit(t, out, func(r *response) { r.Run = nil })
		}, "it gives no session id and cwd of its run"},
		{"trailing data", mismatch, func(t *testing.T, out []byte) []byte {
			return append(append([]byte(nil), out...), []byte(`{"Result":null}`)...)
		}, "data after the response"},
		{"an error without its reason", mismatch, func(t *testing.T, out []byte) []byte {
			return edit(t, out, func(r *response) { r.Result.Verdict, r.Result.Error = Failed, "" })
		}, "its error verdict gives no reason"},
		{"notes dropped", mismatch, func(t *testing.T, out []byte) []byte {
			return edit(t, out, func(r *response) { r.Result.Notes = nil })
		}, "its notes leave out what of its frames was compared"},
		{"frames added", mismatch, func(t *testing.T, out []byte) []byte {
			return edit(t, out, func(r *response) {
				r.Run.Frames = append(r.Run.Frames, acpwire.PermissionRequest("call_forged"))
			})
		}, "its flags leave out a difference of the frames it sent"},
		{"served tools unsorted", mismatch, func(t *testing.T, out []byte) []byte {
			return edit(t, out, func(r *response) { r.Result.Served = []string{"bash", "bash"} })
		}, "its served tools"},
		{"a child's logs outside a refresh", withKids, func(t *testing.T, out []byte) []byte {
			return edit(t, out, func(r *response) { r.Run.Children = []childFacts{{Index: 1, SessionID: "s", Log: []byte("{}")}} })
		}, "it gives the log of child 1, which is not the recording's child 1 of a refresh"},
		{"child sessions dropped", withKids, func(t *testing.T, out []byte) []byte {
			return edit(t, out, func(r *response) { r.Result.Children, r.Children = nil, nil })
		}, "it compares 0 child session(s) of the recording's 1"},
		{"child renamed", withKids, func(t *testing.T, out []byte) []byte {
			return edit(t, out, func(r *response) { r.Result.Children[0].File = "../session.jsonl" })
		}, "its child session 1 is ../session.jsonl"},
		{"child verdict flipped", withKids, func(t *testing.T, out []byte) []byte {
			return edit(t, out, func(r *response) { r.Result.Children[0].Verdict = Mismatch })
		}, "session.1.jsonl: it says mismatch where its comparison and flags say match"},
		{"child expected side replaced", withKids, func(t *testing.T, out []byte) []byte {
			return edit(t, out, func(r *response) { r.Children[0].Expected = r.Children[0].Expected[:1] })
		}, "session.1.jsonl: its expected side is not the recording's"},
		{"child counts inconsistent", withKids, func(t *testing.T, out []byte) []byte {
			return edit(t, out, func(r *response) { r.Result.Children[0].Comparison.Total++ })
		}, "session.1.jsonl: its comparison ("},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, resp := forged(t, tc.dir, Options{}, tc.forge(t, honestOf[tc.dir]))
			if r.Verdict != Failed || resp != nil || !strings.Contains(r.Error, tc.want) || !strings.Contains(r.Error, "it is an error, never a match") {
				t.Fatalf("verdict %s, error %q; want an error saying %q", r.Verdict, r.Error, tc.want)
			}
			if r.Name != filepath.Base(tc.dir) || len(r.Flags)+len(r.Notes)+len(r.Children)+len(r.Got) > 0 || r.Comparison.Total != 0 {
				t.Errorf("a refused response left its word in the result: %+v", r)
			}
		})
	}
}

// TestTheKeptLogIsNamedByTheHost: with -logs DIR, the log of a replay whose
// child names the recording otherwise (../, an absolute path) is written
// nowhere (the response is refused), and an honest one is written as
// DIR/<the directory's base name>.session.jsonl, and nowhere else.
func TestTheKeptLogIsNamedByTheHost(t *testing.T) {
	isolate.Require(t)
	dir := filepath.Join("..", "..", "testdata", "replay", "flagged", "changed-seed")
	out := honest(t, dir, Options{})
	parent := t.TempDir()
	logs := filepath.Join(parent, "logs")
	for _, name := range []string{"../escaped", "/" + filepath.Join(parent, "escaped"), "changed-seed/../../escaped"} {
		r, _ := forged(t, dir, Options{LogDir: logs}, edit(t, out, func(r *response) { r.Result.Name = name }))
		if r.Verdict != Failed || r.LogPath != "" {
			t.Fatalf("a child naming the recording %q: verdict %s, log %q", name, r.Verdict, r.LogPath)
		}
	}
	r, _ := forged(t, dir, Options{LogDir: logs}, out)
	want := filepath.Join(logs, "changed-seed.session.jsonl")
	if r.Verdict != Mismatch || r.LogPath != want {
		t.Fatalf("the honest response: verdict %s (%s), log %q, want mismatch and %s", r.Verdict, r.Error, r.LogPath, want)
	}
	for _, d := range []string{parent, logs} {
		entries, err := os.ReadDir(d)
		if err != nil {
			t.Fatal(err)
		}
		if len(entries) != 1 || (d == parent && entries[0].Name() != "logs") || (d == logs && entries[0].Name() != filepath.Base(want)) {
			t.Errorf("%s holds %v, want only %s", d, entries, map[string]string{parent: "logs", logs: filepath.Base(want)}[d])
		}
	}
}

// TestAnOversizedResponseIsAnError: the host reads at most eight times the
// bound of the recording's files from the child; a longer answer is an
// error verdict naming the bound, while the honest answer, within it,
// gives the honest verdict.
func TestAnOversizedResponseIsAnError(t *testing.T) {
	isolate.Require(t)
	dir := filepath.Join("..", "..", "transcripts", "subagent-report")
	var size int64
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if fi, err := e.Info(); err == nil && fi.Mode().IsRegular() {
			size += fi.Size()
		}
	}
	opt := Options{Recording: recording.Bounds{MaxBytes: size}}
	out := honest(t, dir, opt)
	if r, _ := forged(t, dir, opt, out); r.Verdict != Match {
		t.Fatalf("the honest response within the bound: %s", r.Summary())
	}
	padded := edit(t, out, func(r *response) {
		r.Result.Notes = append(r.Result.Notes, strings.Repeat("n", int(maxResponse(opt.Recording))))
	})
	r, _ := forged(t, dir, opt, padded)
	if r.Verdict != Failed || !strings.Contains(r.Error, "answered more than "+strconv.FormatInt(8*size, 10)+" bytes, the bound of its response") {
		t.Fatalf("a response past the bound: verdict %s, error %q", r.Verdict, r.Error)
	}
}

// TestTheHostWaitsNoLongerThanTheLimit: the host gives the child the
// replay's time limit and a margin, then stops it.
func TestTheHostWaitsNoLongerThanTheLimit(t *testing.T) {
	isolate.Require(t)
	for _, limit := range []time.Duration{0, 5 * time.Second} {
		var left time.Duration
		withChild(t, func(ctx context.Context, _ string, _ []byte, _ isolate.Options) ([]byte, error) {
			d, ok := ctx.Deadline()
			if !ok {
				return nil, context.Canceled
			}
			left = time.Until(d)
			return nil, context.DeadlineExceeded
		})
		r := Replay(context.Background(), filepath.Join("..", "..", "transcripts", "subagent-report"), Options{Timeout: limit})
		want := Options{Timeout: limit}.timeout() + hostMargin
		if r.Verdict != Failed || left > want || left < want-30*time.Second {
			t.Errorf("time limit %s: the child was given %s (want about %s); verdict %s", limit, left, want, r.Verdict)
		}
	}
}

// TestABadRecordingStartsNoChild: a recording past its bound, or whose log
// is not UTF-8, is refused by the host, naming the file (and line), before
// any child starts: the host reads the recording itself first.
func TestABadRecordingStartsNoChild(t *testing.T) {
	isolate.Require(t)
	withChild(t, func(context.Context, string, []byte, isolate.Options) ([]byte, error) {
		t.Error("a child was started")
		return nil, context.Canceled
	})
	dir := filepath.Join(t.TempDir(), "changed-seed")
	if err := recording.CopyTree(filepath.Join("..", "..", "testdata", "replay", "flagged", "changed-seed"), dir); err != nil {
		t.Fatal(err)
	}
	r := Replay(context.Background(), dir, Options{Recording: recording.Bounds{MaxBytes: 1000}})
	if r.Verdict != Failed || !strings.HasPrefix(r.Error, "changed-seed/session.jsonl: ") || !strings.Contains(r.Error, "more than the bound of a recording, 1000 bytes (dsh-replay -recording-max-bytes)") {
		t.Errorf("past its bound: %s", r.Summary())
	}
	log := filepath.Join(dir, recording.SessionFile)
	data, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.SplitAfter(data, []byte("\n"))
	lines[2] = bytes.Replace(lines[2], []byte(`"type":"`), []byte("\"type\":\"\xff"), 1)
	if err := os.WriteFile(log, bytes.Join(lines, nil), 0o644); err != nil {
		t.Fatal(err)
	}
	r = Replay(context.Background(), dir, Options{})
	if r.Verdict != Failed || !strings.HasPrefix(r.Error, "changed-seed/session.jsonl:3: not valid UTF-8: byte 0xff at column ") {
		t.Errorf("not UTF-8: %s", r.Summary())
	}
}

// TestKeepLogStaysInItsDirectory: the kept log is a file of -logs DIR
// itself whatever the name: a name that would make another path (the
// base name of "/", a name with a separator) writes nothing.
func TestKeepLogStaysInItsDirectory(t *testing.T) {
	parent := t.TempDir()
	logs := filepath.Join(parent, "logs")
	for _, name := range []string{"/", "../escaped", "a/b"} {
		res := &Result{Name: name}
		if err := keepLog(Options{LogDir: logs}, res, []byte("{}\n")); err == nil || res.LogPath != "" {
			t.Errorf("name %q: kept as %q (%v)", name, res.LogPath, err)
		}
	}
	res := &Result{Name: "r"}
	if err := keepLog(Options{LogDir: logs}, res, []byte("{}\n")); err != nil || res.LogPath != filepath.Join(logs, "r.session.jsonl") {
		t.Fatalf("name r: kept as %q (%v)", res.LogPath, err)
	}
	entries, _ := os.ReadDir(parent)
	if len(entries) != 1 || entries[0].Name() != "logs" {
		t.Errorf("%s holds %v, want only logs", parent, entries)
	}
}
