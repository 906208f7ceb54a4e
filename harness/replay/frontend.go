package replay

import (
	"encoding/json"
	"fmt"
	"maps"
	"strings"

	"github.com/dshsim/dshsim/harness/replay/projection"
	"github.com/dshsim/dshsim/harness/replay/recording"
	"github.com/dshsim/dshsim/pipeline/session"
)

// unguardedNote says what composition a headless run without a runtime
// context had.
const unguardedNote = "headless composition without a boundary (EX/headless-agent/cordis.yml): dsh-bash-local and no sandbox-policy, approval or runtime-context plugins; tools run unconfined (danger-full-access), nothing asks, and no runtime context is logged"

// unguarded reports whether the recording's composition had no sandbox,
// approval or runtime context: a headless run whose log holds no
// runtime-context message (headless's default cordis.yml mounts
// dsh-bash-local and no policy plugins). The replay composes the same,
// explicitly (stack.Without.Policy).
func unguarded(rec *recording.Recording) bool {
	return rec.Frontend == recording.Headless && !rec.HasRuntimeContext()
}

// frontendChecks are the comparisons a front end's suite makes beyond the
// log, on our log's events (its cwd and session id given): for headless,
// the stream-json records ([streamChecks]); ACP's frames are compared by
// the bridge (acpwire), not here.
func frontendChecks(rec *recording.Recording, ours []recording.Event, cwd, id string) (flags, notes []string, err error) {
	if rec.Frontend != recording.Headless || rec.Stream == nil {
		return nil, nil, nil
	}
	return streamChecks(rec, ours, cwd, id)
}

// streamChecks compares a headless run's stream-json.expected.jsonl with
// our log: its session_event records are the session's events from the
// prompt's splice on (runFixtureTurn streams nothing before it), projected
// and compared as the log is; its result record's output is the last
// assistant message's text and its usage the model usage summed over the
// steps, each step's last report.
func streamChecks(rec *recording.Recording, ours []recording.Event, cwd, id string) (flags, notes []string, err error) {
	file := recording.StreamFile
	want, _, err := projection.ProjectCovered(rec.Stream.Events, normalizer(rec, rec.Header.Cwd, rec.Header.ID))
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", file, err)
	}
	streamed := fromPromptSplice(ours)
	got, _, err := projection.ProjectCovered(streamed, normalizer(rec, cwd, id))
	if err != nil {
		return nil, nil, fmt.Errorf("our log, as streamed: %w", err)
	}
	c := projection.Compare(want, got)
	if p := c.First(); p != nil {
		s := fmt.Sprintf("%s: the session_event records differ from our log's events from the prompt on: turn %d, %s", file, p.Turn, p.Label())
		if len(p.Diffs) > 0 {
			s += ": " + p.Diffs[0].String()
		}
		flags = append(flags, s)
	} else if c.Matched != c.Total {
		flags = append(flags, fmt.Sprintf("%s: %d of %d projected records matched", file, c.Matched, c.Total))
	}
	res := streamResult(streamed)
	if res.Output != rec.Stream.Result.Output {
		flags = append(flags, fmt.Sprintf("%s:%d: field output: expected %q, got %q", file, rec.Stream.ResultLine, rec.Stream.Result.Output, res.Output))
	}
	if !maps.Equal(res.Usage, rec.Stream.Result.Usage) {
		flags = append(flags, fmt.Sprintf("%s:%d: field usage: expected %s, got %s", file, rec.Stream.ResultLine, showUsage(rec.Stream.Result.Usage), showUsage(res.Usage)))
	}
	notes = append(notes, fmt.Sprintf("%s: compared %d session_event records (%d projected events, from the prompt's splice on) and the result record (output, usage); not compared: the records' sessionId (a token) and each event's seq and time", file, len(rec.Stream.Events), c.Total))
	return flags, notes, nil
}

// fromPromptSplice are the events from the first agent/inbox/spliced that
// queues a user's prompt on (all of them when there is none).
func fromPromptSplice(evs []recording.Event) []recording.Event {
	for i, e := range evs {
		if e.Type != session.KindInboxSpliced {
			continue
		}
		var d struct {
			Inserted []struct {
				Source struct {
					Kind string `json:"kind"`
				} `json:"source"`
			} `json:"inserted"`
		}
		if json.Unmarshal(e.Data, &d) != nil {
			continue
		}
		for _, m := range d.Inserted {
			if m.Source.Kind == "user" {
				return evs[i:]
			}
		}
	}
	return evs
}

// streamResult is the result record runFixtureTurn writes for events:
// the last assistant message's text (its text blocks joined; a message
// without one keeps the earlier text) and the usage summed over the
// steps, each step's last report (a usage chunk, or the message's usage).
func streamResult(evs []recording.Event) recording.StreamResult {
	var out recording.StreamResult
	var order []string
	byStep := map[string]map[string]int{}
	set := func(turn, step int, u map[string]int) {
		k := fmt.Sprintf("%d/%d", turn, step)
		if _, ok := byStep[k]; !ok {
			order = append(order, k)
		}
		byStep[k] = u
	}
	for _, e := range evs {
		switch e.Type {
		case session.KindAssistantChunk:
			var d struct {
				Turn, Step int
				Chunk      struct {
					Type  string         `json:"type"`
					Usage map[string]int `json:"usage"`
				} `json:"chunk"`
			}
			if json.Unmarshal(e.Data, &d) == nil && d.Chunk.Type == "usage" {
				set(d.Turn, d.Step, d.Chunk.Usage)
			}
		case session.KindAssistantMessage:
			var d struct {
				Turn, Step int
				Message    struct {
					Content []struct {
						Type string `json:"type"`
						Text string `json:"text"`
					} `json:"content"`
				} `json:"message"`
				Usage map[string]int `json:"usage"`
			}
			if json.Unmarshal(e.Data, &d) != nil {
				continue
			}
			var texts []string
			for _, b := range d.Message.Content {
				if b.Type == "text" {
					texts = append(texts, b.Text)
				}
			}
			if len(texts) > 0 {
				out.Output = strings.Join(texts, "")
			}
			if d.Usage != nil {
				set(d.Turn, d.Step, d.Usage)
			}
		}
	}
	for _, k := range order {
		out.Usage = addUsage(out.Usage, byStep[k])
	}
	return out
}

// addUsage is upstream's sum of two usage reports: input and output
// tokens always, the cache and reasoning counts where either has them.
func addUsage(total, step map[string]int) map[string]int {
	next := map[string]int{"inputTokens": total["inputTokens"] + step["inputTokens"], "outputTokens": total["outputTokens"] + step["outputTokens"]}
	for _, k := range []string{"cacheReadTokens", "cacheWriteTokens", "reasoningTokens"} {
		_, a := total[k]
		_, b := step[k]
		if a || b {
			next[k] = total[k] + step[k]
		}
	}
	return next
}

// showUsage renders a usage report for a flag.
func showUsage(u map[string]int) string {
	if u == nil {
		return "none"
	}
	b, _ := json.Marshal(u)
	return string(b)
}
