package sims

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/dshsim/dshsim/harness"
	"github.com/dshsim/dshsim/harness/replay"
	"github.com/dshsim/dshsim/harness/replay/projection"
	"github.com/dshsim/dshsim/internal/jsjson"
)

// replayRecordings are the recordings out/replay.txt covers, in order.
var replayRecordings = []string{"escalation-approved", "escalation-rejected", "fs-escalation-approved"}

// The replay sim: dsh-replay of upstream's three escalation recordings.
func runReplay(env *harness.Env) (map[string][]byte, error) {
	dirs := make([]string, len(replayRecordings))
	for i, name := range replayRecordings {
		dirs[i] = filepath.Join(env.Root, "transcripts", name)
	}
	logDir, err := env.TempDir()
	if err != nil {
		return nil, err
	}
	results := replay.Run(context.Background(), dirs, replay.RunOptions{Options: replay.Options{LogDir: logDir}, Parallel: 1})
	for _, r := range results {
		if r.Verdict == replay.Failed {
			return nil, fmt.Errorf("replay %s: %s", r.Name, r.Error)
		}
	}
	files := map[string][]byte{}
	for _, r := range results[:2] {
		files["txt/"+r.Name+".txt"] = excerpt(r)
	}
	files["out/replay.txt"] = summary(results)
	return files, nil
}

// excerptKinds are the events a log excerpt shows.
var excerptKinds = map[string]bool{
	projection.KindCall: true, projection.KindAsked: true, projection.KindDecided: true, projection.KindResult: true,
}

// excerpt renders the tool/call, approval/asked, approval/decided and
// tool/result events of our replayed log, one canonical JSON line each, and
// matches every line against the same line rendered from the recording.
func excerpt(r *replay.Result) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "dsh-replay transcripts/%s (model constructed from the recording; tools, approval and sandbox real)\n", r.Name)
	fmt.Fprintf(&b, "policy from the recording: sandbox %s, approval %s\n", r.Mode, r.Approval)
	b.WriteString("log excerpt of our replay, compared fields only; \"=\" marks a line equal to the recording's\n")
	var ours, theirs []string
	var seqs []int64
	for _, p := range r.Comparison.Pairs {
		if p.Got != nil && excerptKinds[p.Got.Kind] {
			ours = append(ours, line(p.Got))
		}
		if p.Expected != nil && excerptKinds[p.Expected.Kind] {
			theirs = append(theirs, line(p.Expected))
			seqs = append(seqs, p.Expected.Seq)
		}
	}
	matched := 0
	for i, l := range ours {
		mark := "≠"
		if i < len(theirs) && theirs[i] == l {
			mark = "="
			matched++
		}
		fmt.Fprintf(&b, "%s %s\n", mark, l)
	}
	for i := len(ours); i < len(theirs); i++ {
		fmt.Fprintf(&b, "≠ (missing in the replay) %s\n", theirs[i])
	}
	span := ""
	if len(seqs) > 0 {
		span = fmt.Sprintf(" (recording seq %d-%d)", seqs[0], seqs[len(seqs)-1])
	}
	fmt.Fprintf(&b, "%d of %d lines match the recording line by line%s\n", matched, max(len(ours), len(theirs)), span)
	return b.Bytes()
}

// line renders one projected event as {"type":...} followed by its fields in
// sorted key order, with HTML characters unescaped.
func line(it *projection.Item) string {
	keys := make([]string, 0, len(it.Fields))
	for k := range it.Fields {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString(`{"type":` + js(it.Kind))
	for _, k := range keys {
		b.WriteString("," + js(k) + ":" + js(it.Fields[k]))
	}
	b.WriteString("}")
	return b.String()
}

// js is v as one line of JSON, as JSON.stringify writes it (no HTML
// escaping); v is decoded JSON or call arguments: always encodable.
func js(v any) string {
	b, _ := jsjson.Marshal(v)
	return string(b)
}

// summary is out/replay.txt: per recording the matched and mismatched counts,
// the verdict and every projected event.
func summary(results []*replay.Result) []byte {
	var b bytes.Buffer
	b.WriteString("dsh-replay of upstream's escalation recordings (model constructed from each recording; tools, approval and sandbox real)\n\n")
	for _, r := range results {
		fmt.Fprintf(&b, "%s  (sandbox %s, approval %s)\n", r.Name, r.Mode, r.Approval)
		for _, p := range r.Comparison.Pairs {
			mark := "="
			if !p.Match {
				mark = "≠"
			}
			fmt.Fprintf(&b, "  %s turn %d  %s\n", mark, p.Turn, p.Label())
			for _, d := range p.Diffs {
				fmt.Fprintf(&b, "      %s\n", d.String())
			}
		}
		for _, f := range r.Flags {
			fmt.Fprintf(&b, "  flag: %s\n", f)
		}
		fmt.Fprintf(&b, "  matched %d, mismatched %d of %d: %s\n\n", r.Comparison.Matched, r.Comparison.Mismatched, r.Comparison.Total, r.Verdict)
	}
	c := replay.Count(results)
	verdict := "FAIL"
	if replay.AllMatch(results) {
		verdict = "ok"
	}
	fmt.Fprintf(&b, "%s: %d recordings, %d match, %d mismatch, %d error\n", verdict, c.Total, c.Match, c.Mismatch, c.Error)
	return b.Bytes()
}
