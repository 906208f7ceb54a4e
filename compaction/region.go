package compaction

import (
	"encoding/json"
	"fmt"

	"github.com/dshsim/dshsim/pipeline/session"
)

// Region is an inclusive range of current surface nodes to compact.
type Region struct {
	// Start and End are the seqs of its first and last node.
	Start, End int64
	// StartIdx and EndIdx are their positions on the surface.
	StartIdx, EndIdx int
}

// Seqs are the region's node seqs on s, in order.
func (r Region) Seqs(s *Surface) []int64 { return s.Seqs()[r.StartIdx : r.EndIdx+1] }

// Tokens is the region's price on s.
func (r Region) Tokens(s *Surface) int {
	n := 0
	for _, node := range s.Nodes[r.StartIdx : r.EndIdx+1] {
		n += node.Tokens
	}
	return n
}

// SelectRange is the head-anchored range upstream compacts next: from the
// surface's first node up to the tail kept verbatim, the fewest last
// nodes priced at least retainTokens in total, moved earlier until the
// cut splits no tool call from its result. ok is false when nothing
// before the kept tail can go. Pure.
func SelectRange(s *Surface, retainTokens int) (r Region, ok bool, err error) {
	if len(s.Nodes) == 0 {
		return Region{}, false, nil
	}
	cuts, err := s.balancedCuts()
	if err != nil {
		return Region{}, false, err
	}
	keep, sum := len(s.Nodes), 0
	for i := len(s.Nodes) - 1; i >= 0; i-- {
		sum += s.Nodes[i].Tokens
		keep = i
		if sum >= retainTokens {
			break
		}
	}
	for keep > 0 && !cuts[keep] {
		keep--
	}
	if keep == 0 {
		return Region{}, false, nil
	}
	return Region{Start: s.Nodes[0].Seq, End: s.Nodes[keep-1].Seq, StartIdx: 0, EndIdx: keep - 1}, true, nil
}

// ValidateRegion checks that start..end is a range of current nodes, in
// order, that splits no tool call from its result at either end. Pure.
func ValidateRegion(s *Surface, start, end int64) (Region, error) {
	i, j := s.Index(start), s.Index(end)
	switch {
	case i < 0:
		return Region{}, fmt.Errorf("compactRegion: start seq %d not found in surface", start)
	case j < 0:
		return Region{}, fmt.Errorf("compactRegion: end seq %d not found in surface", end)
	case i > j:
		return Region{}, fmt.Errorf("compactRegion: start seq %d (position %d) is after end seq %d (position %d) on the surface", start, i, end, j)
	}
	cuts, err := s.balancedCuts()
	if err != nil {
		return Region{}, err
	}
	if !cuts[i] {
		return Region{}, fmt.Errorf("compactRegion: start seq %d is not a balanced boundary (would split a step's tool-call/result pair)", start)
	}
	if !cuts[j+1] {
		return Region{}, fmt.Errorf("compactRegion: end seq %d is not a balanced boundary (would split a step, or the step is still open)", end)
	}
	return Region{Start: start, End: end, StartIdx: i, EndIdx: j}, nil
}

// entryState is what a compaction checks of the log before it opens: the
// open turn (nil: none), the last compaction/start without its
// compaction/end, and the last session/end-seed.
type entryState struct {
	openTurn  *int
	unmatched *session.Event
	endSeed   *int64
}

// inspectEntry reads the entry state from the log's tail. Pure.
func inspectEntry(events []session.Event) entryState {
	var st entryState
	turnKnown, compactionKnown := false, false
	for i := len(events) - 1; i >= 0; i-- {
		e := events[i]
		if st.endSeed == nil && e.Type == session.KindEndSeed {
			seq := e.Seq
			st.endSeed = &seq
		}
		if !compactionKnown && (e.Type == session.KindCompactionStart || e.Type == session.KindCompactionEnd) {
			compactionKnown = true
			if e.Type == session.KindCompactionStart {
				st.unmatched = &events[i]
			}
		}
		if !turnKnown && (e.Type == session.KindTurnStart || e.Type == session.KindTurnEnd) {
			turnKnown = true
			var d struct{ Turn int }
			if e.Type == session.KindTurnStart && json.Unmarshal(e.Data, &d) == nil {
				st.openTurn = &d.Turn
			}
		}
		if turnKnown && compactionKnown && st.endSeed != nil {
			break
		}
	}
	return st
}

// inactive refuses a compaction while another one is open: an unmatched
// compaction/start not followed by a session/end-seed (which proves it
// belongs to an earlier lifecycle of the session).
func (st entryState) inactive(stage string) error {
	if st.unmatched == nil || (st.endSeed != nil && *st.endSeed > st.unmatched.Seq) {
		return nil
	}
	return fmt.Errorf("%s: compaction already in progress; the session compaction lock is already active", stage)
}
