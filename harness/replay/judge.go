package replay

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/dshsim/dshsim/harness/replay/acpwire"
	"github.com/dshsim/dshsim/harness/replay/projection"
	"github.com/dshsim/dshsim/harness/replay/recording"
	"github.com/dshsim/dshsim/pipeline/session"
)

// The host's side of a contained replay: the child's response is the word
// of a process that ran the recording's code, so the host decodes it
// strictly, recomputes what it can from the recording it read itself, and
// refuses every response that disagrees. docs/replay.md ("What the host
// checks") lists what is checked and what is taken on trust.

// maxResponse bounds a contained replay's response in bytes: eight times
// the bound of the recording's files (256 MiB by default). A response
// carries our log (about the size of the recording's), both projections
// and the comparison that pairs them again, about five times the
// recording's session log; the child's envelope base64-encodes it, a third
// more.
func maxResponse(b recording.Bounds) int64 { return 8 * b.WithDefaults().MaxBytes }

// decodeResponse decodes the child's response strictly: one JSON value of
// the response's shape, no unknown field, no value of the wrong type, and
// spelled exactly as the child's encoder (json.Marshal) spells a response:
// encoded again it must give back the same bytes, so a missing field, a key
// in another case (encoding/json matches keys case-insensitively) or a key
// given twice (the last would win) is refused too.
func decodeResponse(out []byte) (*response, error) {
	dec := json.NewDecoder(bytes.NewReader(out))
	dec.DisallowUnknownFields()
	var resp response
	if err := dec.Decode(&resp); err != nil {
		return nil, fmt.Errorf("undecodable: %w", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("data after the response")
	}
	canon, err := json.Marshal(&resp)
	if err != nil {
		return nil, err
	}
	if !bytes.Equal(canon, out) {
		i := 0
		for i < len(canon) && i < len(out) && canon[i] == out[i] {
			i++
		}
		return nil, fmt.Errorf("not spelled as a response is, from byte %d (%q where %q is due): a field missing, repeated, misspelled or out of order", i, excerpt(out, i), excerpt(canon, i))
	}
	if resp.Result == nil {
		return nil, errors.New("no result")
	}
	return &resp, nil
}

// excerpt is up to 40 bytes of b from i.
func excerpt(b []byte, i int) string { return string(b[i:min(len(b), i+40)]) }

// judge checks the child's response resp against what the host read of
// the recording at abs (p, and res as prepare filled it) and completes res:
// what the host can derive is the host's, and the child's word for it must
// be the same; what only the child can know is taken once it agrees with
// the rest; the verdict is the host's. Any disagreement is an error.
func judge(p *prepared, res *Result, abs string, opt Options, resp *response) error {
	r := resp.Result
	if err := checkIdentity(res, abs, r); err != nil {
		return err
	}
	if err := checkServed(r.Served); err != nil {
		return err
	}
	if r.Verdict == Failed {
		res.Verdict, res.Error = Failed, r.Error
		res.Flags, res.Notes, res.Served = r.Flags, r.Notes, r.Served
		return nil
	}
	cmp, err := checkSides(p, res, r, resp)
	if err != nil {
		return err
	}
	if err := checkRun(p, r, opt, resp); err != nil {
		return err
	}
	children, err := judgeChildren(p, r, resp.Children)
	if err != nil {
		return err
	}
	res.Comparison, res.Children, res.Expected, res.Got = cmp, children, p.expected, resp.Got
	res.Flags, res.Notes, res.Served = r.Flags, r.Notes, r.Served
	res.Verdict = res.decide()
	if r.Verdict != res.Verdict {
		return fmt.Errorf("it says %s where its comparison and flags say %s", r.Verdict, res.Verdict)
	}
	return nil
}

// checkIdentity checks what names the replay: the recording, its
// directory, no kept log (the child keeps none), a verdict with its reason
// when it is an error and without one otherwise, and the settings the host
// read.
func checkIdentity(res *Result, abs string, r *Result) error {
	switch {
	case r.Name != res.Name:
		return fmt.Errorf("it names the recording %q, which is %q", r.Name, res.Name)
	case r.Dir != abs:
		return fmt.Errorf("it names the directory %q, which is %q", r.Dir, abs)
	case r.LogPath != "":
		return fmt.Errorf("it names a kept log %q, where the child keeps none", r.LogPath)
	case r.Verdict != Match && r.Verdict != Mismatch && r.Verdict != Failed:
		return fmt.Errorf("its verdict %q is none of %s, %s and %s", r.Verdict, Match, Mismatch, Failed)
	case r.Verdict == Failed && r.Error == "":
		return errors.New("its error verdict gives no reason")
	case r.Verdict != Failed && r.Error != "":
		return fmt.Errorf("its %s verdict comes with an error (%q)", r.Verdict, r.Error)
	case r.Verdict == Failed:
		return nil // the child may have failed before it read the settings
	case r.Frontend != res.Frontend:
		return fmt.Errorf("it names the front end %q, where the recording's files say %q", r.Frontend, res.Frontend)
	case r.Mode != res.Mode || r.Approval != res.Approval || r.Settings != res.Settings:
		return fmt.Errorf("it states mode %q, approval %q and settings %q, where the recording states %q, %q and %q", r.Mode, r.Approval, r.Settings, res.Mode, res.Approval, res.Settings)
	}
	return nil
}

// checkServed checks the served tools: names, sorted, each once.
func checkServed(served []string) error {
	for i, s := range served {
		if s == "" || (i > 0 && served[i-1] >= s) {
			return fmt.Errorf("its served tools %q are not names, sorted, each once", served)
		}
	}
	return nil
}

// checkSides checks the projections: the expected side must be the host's
// own projection of the recording, and the comparison the child gives must
// be the host's comparison of that side with the child's got side, which it
// returns; the child's flags and notes must begin with those the host's
// reading raised (a stale projection file, the recording's settings).
func checkSides(p *prepared, res, r *Result, resp *response) (projection.Comparison, error) {
	if !sameJSON(resp.Expected, p.expected) {
		return projection.Comparison{}, fmt.Errorf("its expected side is not the recording's (%s)", difference(p.expected, resp.Expected))
	}
	cmp, _ := p.compare(resp.Got)
	if !sameJSON(r.Comparison, cmp) {
		return cmp, fmt.Errorf("its comparison (%s) is not the recording's projection compared with its got side (%s)", counts(r.Comparison), counts(cmp))
	}
	if !startsWith(r.Flags, res.Flags) {
		return cmp, fmt.Errorf("its flags leave out the recording's %q", res.Flags)
	}
	if !startsWith(r.Notes, res.Notes) {
		return cmp, fmt.Errorf("its notes leave out the recording's %q", res.Notes)
	}
	return cmp, nil
}

// checkRun checks the facts of the run: the frames the child says it sent
// raise every difference from stdout.expected.jsonl among its flags (and
// their note among its notes); its got side is the projection of the log
// it sent (up to where the got side ends); child logs come only from a refresh, one per recorded child.
func checkRun(p *prepared, r *Result, opt Options, resp *response) error {
	run, rec := resp.Run, p.rec
	if run == nil || run.SessionID == "" || run.Cwd == "" {
		return errors.New("it gives no session id and cwd of its run")
	}
	for i, c := range run.Children {
		if !opt.Refresh || i >= len(rec.Children) || c.Index != rec.Children[i].Index || c.SessionID == "" {
			return fmt.Errorf("it gives the log of child %d, which is not the recording's child %d of a refresh", c.Index, i+1)
		}
	}
	if err := checkWire(rec, r, run); err != nil {
		return err
	}
	if len(rec.Events) == 0 {
		return nil // no log is compared: its got side is empty (checkSides)
	}
	c, err := session.Parse("our log", resp.Log)
	if err != nil {
		return fmt.Errorf("its log: %w", err)
	}
	got, _, err := projectOurs(rec, "our log", c, run.Cwd, run.SessionID)
	if err != nil {
		return err
	}
	if err := checkFrontend(rec, r, c, run); err != nil {
		return err
	}
	// The got side is projected while the stack runs, the log read once it
	// has closed: events written as it closed (a turn/end of an aborted
	// turn) may follow, never differ.
	if len(got) < len(resp.Got) || (len(resp.Got) > 0 && !sameJSON(got[:len(resp.Got)], resp.Got)) {
		return fmt.Errorf("its got side is not the projection of the log it sent (%s)", difference(got, resp.Got))
	}
	return nil
}

// judgeChildren checks the child sessions' results against the recording's
// children and returns the host's: every recorded child compared (unless
// the recording's log has no event, or a flag says none could be), each
// named as the recording names it, its expected side the host's own, its
// comparison and verdict those of that side with its got side.
func judgeChildren(p *prepared, r *Result, sides []childSides) ([]*ChildResult, error) {
	rec := p.rec
	compared := rec.ComparedChildren()
	want := len(compared)
	if len(rec.Events) == 0 {
		want = 0
	}
	switch {
	case len(sides) != len(r.Children):
		return nil, fmt.Errorf("it gives the sides of %d child session(s) for %d result(s)", len(sides), len(r.Children))
	case len(r.Children) != want && (len(r.Children) != 0 || len(r.Flags) == 0):
		return nil, fmt.Errorf("it compares %d child session(s) of the recording's %d", len(r.Children), want)
	}
	var out []*ChildResult
	for i, cr := range r.Children {
		host, _, err := expectChild(rec, compared[i])
		if err != nil {
			return nil, err
		}
		switch {
		case cr == nil:
			return nil, fmt.Errorf("it gives no result for %s", host.File)
		case cr.Index != host.Index || cr.File != host.File || cr.Parent != host.Parent:
			return nil, fmt.Errorf("its child session %d is %s (index %d, parent %d), the recording's %s (index %d, parent %d)", i+1, cr.File, cr.Index, cr.Parent, host.File, host.Index, host.Parent)
		case !sameJSON(sides[i].Expected, host.Expected):
			return nil, fmt.Errorf("%s: its expected side is not the recording's (%s)", host.File, difference(host.Expected, sides[i].Expected))
		case !startsWith(cr.Flags, host.Flags):
			return nil, fmt.Errorf("%s: its flags leave out the recording's %q", host.File, host.Flags)
		}
		cmp := projection.Compare(host.Expected, sides[i].Got)
		if !sameJSON(cr.Comparison, cmp) {
			return nil, fmt.Errorf("%s: its comparison (%s) is not the recording's projection compared with its got side (%s)", host.File, counts(cr.Comparison), counts(cmp))
		}
		host.CallID, host.Comparison, host.Got, host.Flags, host.Notes = cr.CallID, cmp, sides[i].Got, cr.Flags, cr.Notes
		if host.Verdict = host.decide(); cr.Verdict != host.Verdict {
			return nil, fmt.Errorf("%s: it says %s where its comparison and flags say %s", host.File, cr.Verdict, host.Verdict)
		}
		out = append(out, host)
	}
	return out, nil
}

// sameJSON reports whether a and b encode to the same JSON: values read
// by the host and values decoded from the child's response compare equal
// whatever Go types hold them.
func sameJSON(a, b any) bool {
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && bytes.Equal(ja, jb)
}

// startsWith reports whether s begins with prefix.
func startsWith(s, prefix []string) bool {
	return len(s) >= len(prefix) && slices.Equal(s[:len(prefix)], prefix)
}

// difference names where projection b first differs from a.
func difference(a, b []projection.Item) string {
	if p := projection.Compare(a, b).First(); p != nil {
		return fmt.Sprintf("turn %d, %s", p.Turn, p.Label())
	}
	if len(a) != len(b) {
		return fmt.Sprintf("%d events where it has %d", len(a), len(b))
	}
	return "the events' seq or an uncompared field differ"
}

// counts renders a comparison's tallies.
func counts(c projection.Comparison) string {
	return fmt.Sprintf("%d of %d matched, %d mismatched, %d pairs", c.Matched, c.Total, c.Mismatched, len(c.Pairs))
}

// checkWire checks that an ACP run's flags and notes hold every difference
// of the frames it says it sent from stdout.expected.jsonl, and what of
// them was compared (a front end beyond ACP sends no ACP frames).
func checkWire(rec *recording.Recording, r *Result, run *runFacts) error {
	if !rec.Frontend.OverACP() {
		return nil
	}
	lines, err := acpwire.Classify(rec.Stdout)
	if err != nil {
		return err
	}
	wire := acpwire.Compare(recording.StdoutFile, lines, run.Frames)
	for _, problem := range wire.Problems {
		if !slices.Contains(r.Flags, problem) {
			return fmt.Errorf("its flags leave out a difference of the frames it sent: %s", problem)
		}
	}
	if note := wire.Note(recording.StdoutFile); !slices.Contains(r.Notes, note) {
		return fmt.Errorf("its notes leave out what of its frames was compared: %s", note)
	}
	return nil
}

// checkFrontend recomputes the front end's own comparisons on the log the
// run sent (c): each of their flags and notes must be the run's.
func checkFrontend(rec *recording.Recording, r *Result, c *session.Contents, run *runFacts) error {
	flags, notes, err := frontendChecks(rec, eventsOf(c), run.Cwd, run.SessionID)
	if err != nil {
		return err
	}
	for _, f := range flags {
		if !slices.Contains(r.Flags, f) {
			return fmt.Errorf("its flags leave out a difference of its log from %s: %s", rec.LogFile, f)
		}
	}
	for _, n := range notes {
		if !slices.Contains(r.Notes, n) {
			return fmt.Errorf("its notes leave out what the front end's comparison compared: %s", n)
		}
	}
	return nil
}
