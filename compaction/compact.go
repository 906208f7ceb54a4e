package compaction

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/dshsim/dshsim/internal/jsjson"
	"github.com/dshsim/dshsim/pipeline/session"
)

// Log is the session log a compaction reads and appends to.
type Log interface {
	Events() ([]session.Event, error)
	AppendWith(typ string, data any, o session.AppendOptions) (session.Event, error)
}

// Input is what the summary call condenses: the compacted range's events
// (their messages, in surface order), and the policy's cap.
type Input struct {
	// Events are the events whose messages the range holds.
	Events []session.Event
	// Target is the route the summary call takes; MaxTokens caps it.
	Target    Target
	MaxTokens int
}

// Summarize makes the summary of a range (a model call, [SummaryOf]).
type Summarize func(ctx context.Context, in Input) (Summary, error)

// Result is a committed compaction.
type Result struct {
	CompactionID string
	// StartSeq, SummarySeq and EndSeq locate its events.
	StartSeq, SummarySeq, EndSeq int64
	Region                       Region
	ShadowedSeqs                 []int64
	ShadowedTokenCount           int
}

// lifecycle is compaction/start's data, and compaction/end's with error.
type lifecycle struct {
	CompactionID string `json:"compactionId"`
	Turn         *int   `json:"turn"`
	Error        string `json:"error,omitempty"`
}

// summaryData is compaction/summary's data, in upstream's key order.
type summaryData struct {
	CompactionID       string            `json:"compactionId"`
	Summary            []json.RawMessage `json:"summary"`
	RawOutput          []json.RawMessage `json:"rawOutput"`
	LLMStreamCall      bool              `json:"llmStreamCall"`
	ShadowedRange      shadowedRange     `json:"shadowedRange"`
	ShadowedSeqs       []int64           `json:"shadowedSeqs"`
	ShadowedTokenCount int               `json:"shadowedTokenCount"`
	Provider           string            `json:"provider"`
	Model              string            `json:"model"`
	MaxTokens          int               `json:"maxTokens"`
	Usage              json.RawMessage   `json:"usage,omitempty"`
}

type shadowedRange struct {
	Start int64 `json:"start"`
	End   int64 `json:"end"`
}

// checkpoint is the checkpoint message (upstream's createUserMessage).
type checkpoint struct {
	Content []json.RawMessage `json:"content"`
	Source  checkpointSource  `json:"source"`
	Role    string            `json:"role"`
	ID      string            `json:"id"`
}

type checkpointSource struct {
	Kind         string `json:"kind"`
	Plugin       string `json:"plugin"`
	CompactionID string `json:"compactionId"`
}

// CompactRegion runs one automatic compaction of start..end inside the
// open turn, as upstream's transaction does: the range is validated and
// no other compaction may be open; compaction/start; the summary
// (summarize), whose framed checkpoint must be priced below the range;
// the surface must be unchanged meanwhile; then compaction/summary, the
// checkpoint user/message replacing the range, compaction/end. A failure
// after compaction/start closes it with compaction/end carrying the error
// (one attempt) and is returned.
func CompactRegion(ctx context.Context, log Log, start, end int64, summarize Summarize) (*Result, error) {
	events, err := log.Events()
	if err != nil {
		return nil, err
	}
	s, err := Fold(events)
	if err != nil {
		return nil, err
	}
	region, err := ValidateRegion(s, start, end)
	if err != nil {
		return nil, err
	}
	entry := inspectEntry(events)
	if err := entry.inactive("compaction"); err != nil {
		return nil, err
	}
	if entry.openTurn == nil {
		return nil, fmt.Errorf("compactRegion: no open turn — automatic compaction events must be enclosed in a turn")
	}
	life := lifecycle{CompactionID: session.NewID(), Turn: entry.openTurn}
	startEv, err := log.AppendWith(session.KindCompactionStart, life, session.AppendOptions{})
	if err != nil {
		return nil, err
	}
	res := &Result{CompactionID: life.CompactionID, StartSeq: startEv.Seq, Region: region,
		ShadowedSeqs: region.Seqs(s), ShadowedTokenCount: region.Tokens(s)}
	if err := summarizeAndCommit(ctx, log, events, s, res, summarize); err != nil {
		closing := life
		closing.Error = err.Error()
		if _, cerr := log.AppendWith(session.KindCompactionEnd, closing, session.AppendOptions{}); cerr != nil {
			return nil, cerr
		}
		return nil, err
	}
	endEv, err := log.AppendWith(session.KindCompactionEnd, life, session.AppendOptions{})
	if err != nil {
		return res, err // the close itself failed: nothing more is attempted
	}
	res.EndSeq = endEv.Seq
	return res, nil
}

// summarizeAndCommit summarizes the range and appends compaction/summary
// and the checkpoint.
func summarizeAndCommit(ctx context.Context, log Log, events []session.Event, s *Surface, res *Result, summarize Summarize) error {
	in := Input{Events: eventsOf(events, res.ShadowedSeqs)}
	sum, err := summarize(ctx, in)
	if err != nil {
		return err
	}
	msg := checkpoint{Content: Frame(sum.Summary), Role: "user", ID: session.NewID(),
		Source: checkpointSource{Kind: "plugin", Plugin: CheckpointPlugin, CompactionID: res.CompactionID}}
	framed, err := priceBlocks(msg.Content)
	if err != nil {
		return err
	}
	if framed >= res.ShadowedTokenCount {
		return fmt.Errorf("summary is not smaller than the shadowed content (%d estimated framed tokens >= %d)", framed, res.ShadowedTokenCount)
	}
	now, err := log.Events()
	if err != nil {
		return err
	}
	after, err := Fold(now)
	if err != nil {
		return err
	}
	if !slices.Equal(after.Nodes, s.Nodes) {
		return fmt.Errorf("compaction: session surface changed during summarization")
	}
	rng := shadowedRange{Start: res.Region.Start, End: res.Region.End}
	data := summaryData{CompactionID: res.CompactionID, Summary: sum.Summary, RawOutput: sum.RawOutput, LLMStreamCall: true,
		ShadowedRange: rng, ShadowedSeqs: res.ShadowedSeqs, ShadowedTokenCount: res.ShadowedTokenCount,
		Provider: sum.Target.Provider, Model: sum.Target.Model, MaxTokens: sum.MaxTokens, Usage: sum.Usage}
	summaryEv, err := log.AppendWith(session.KindCompactionSummary, data, session.AppendOptions{})
	if err != nil {
		return err
	}
	res.SummarySeq = summaryEv.Seq
	seqs := append([]int64{res.StartSeq, summaryEv.Seq}, res.ShadowedSeqs...)
	op := replaceOp{Op: "replace", Start: rng.Start, End: rng.End}
	_, err = log.AppendWith(session.KindUserMessage, msg, session.AppendOptions{SurfaceOp: op, SourceEventSeqs: seqs})
	return err
}

// priceBlocks prices a message of these content blocks.
func priceBlocks(blocks []json.RawMessage) (int, error) {
	raw, err := json.Marshal(blocks)
	if err != nil {
		return 0, err
	}
	v, err := jsjson.Parse(raw)
	if err != nil {
		return 0, err
	}
	return EstimateMessage(v)
}

// eventsOf are the events of seqs, in that order.
func eventsOf(events []session.Event, seqs []int64) []session.Event {
	var out []session.Event
	for _, seq := range seqs {
		if i := slices.IndexFunc(events, func(e session.Event) bool { return e.Seq == seq }); i >= 0 {
			out = append(out, events[i])
		}
	}
	return out
}
