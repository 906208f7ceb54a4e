package fs

import (
	"math"
	"strings"
)

// DiffContext is the number of context lines around each change.
const DiffContext = 3

// DiffEntry is one hunk of a write/edit diff as persisted in meta.
type DiffEntry struct {
	// Path is the raw file_path argument of the call (not the display path).
	Path string `json:"path"`
	// OldText is the hunk's context and removed lines joined by "\n"; nil when
	// the hunk has no old lines.
	OldText *string `json:"oldText"`
	// NewText is the hunk's context and added lines joined by "\n".
	NewText string `json:"newText"`
}

// Diffs returns one entry per unified-diff hunk (3 context lines) between the
// LF-normalized before and after; identical texts give an empty list.
func Diffs(path, before, after string) []DiffEntry {
	out := []DiffEntry{}
	for _, h := range StructuredPatch(before, after, DiffContext) {
		var oldLines, newLines []string
		for _, l := range h.Lines {
			switch l[0] {
			case ' ':
				oldLines = append(oldLines, l[1:])
				newLines = append(newLines, l[1:])
			case '-':
				oldLines = append(oldLines, l[1:])
			case '+':
				newLines = append(newLines, l[1:])
			}
		}
		e := DiffEntry{Path: path, NewText: strings.Join(newLines, "\n")}
		if len(oldLines) > 0 {
			s := strings.Join(oldLines, "\n")
			e.OldText = &s
		}
		out = append(out, e)
	}
	return out
}

// Hunk is one unified-diff hunk. Lines carry a one-character prefix: ' '
// context, '-' removed, '+' added, '\' the no-newline marker.
type Hunk struct {
	OldStart, OldLines, NewStart, NewLines int
	Lines                                  []string
}

// StructuredPatch computes unified-diff hunks between two texts line by line,
// reproducing jsdiff's structuredPatch: a Myers diff over line tokens (each
// line keeps its "\n"), ties broken toward removal, and change runs separated
// by at most 2*context common lines merged into one hunk.
func StructuredPatch(oldStr, newStr string, context int) []Hunk {
	comps := diffLines(tokenizeLines(oldStr), tokenizeLines(newStr))
	comps = append(comps, component{}) // sentinel: eases closing the last hunk
	var hunks []Hunk
	oldRangeStart, newRangeStart := 0, 0
	var cur []string
	oldLine, newLine := 1, 1
	for i := range comps {
		c := &comps[i]
		lines := c.lines()
		if c.added || c.removed {
			if oldRangeStart == 0 {
				oldRangeStart, newRangeStart = oldLine, newLine
				if i > 0 {
					prev := comps[i-1].lines()
					if context > 0 {
						cur = prefixed(' ', prev[max(0, len(prev)-context):])
					} else {
						cur = nil
					}
					oldRangeStart -= len(cur)
					newRangeStart -= len(cur)
				}
			}
			p := byte('-')
			if c.added {
				p = '+'
			}
			cur = append(cur, prefixed(p, lines)...)
			if c.added {
				newLine += len(lines)
			} else {
				oldLine += len(lines)
			}
			continue
		}
		if oldRangeStart != 0 {
			if len(lines) <= context*2 && i < len(comps)-2 {
				cur = append(cur, prefixed(' ', lines)...)
			} else {
				n := min(len(lines), context)
				cur = append(cur, prefixed(' ', lines[:n])...)
				h := Hunk{OldStart: oldRangeStart, OldLines: oldLine - oldRangeStart + n,
					NewStart: newRangeStart, NewLines: newLine - newRangeStart + n}
				if i >= len(comps)-2 && len(lines) <= context {
					oldEOFNewline := strings.HasSuffix(oldStr, "\n")
					newEOFNewline := strings.HasSuffix(newStr, "\n")
					noNlBeforeAdds := len(lines) == 0 && len(cur) > h.OldLines
					if !oldEOFNewline && noNlBeforeAdds && len(oldStr) > 0 {
						cur = append(cur[:h.OldLines], append([]string{`\ No newline at end of file`}, cur[h.OldLines:]...)...)
					}
					if (!oldEOFNewline && !noNlBeforeAdds) || !newEOFNewline {
						cur = append(cur, `\ No newline at end of file`)
					}
				}
				h.Lines = cur
				hunks = append(hunks, h)
				oldRangeStart, newRangeStart, cur = 0, 0, nil
			}
		}
		oldLine += len(lines)
		newLine += len(lines)
	}
	return hunks
}

func prefixed(p byte, lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = string(p) + l
	}
	return out
}

// tokenizeLines splits text into line tokens that keep their "\n"; a trailing
// newline adds no empty token.
func tokenizeLines(s string) []string {
	var out []string
	for s != "" {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			out = append(out, s)
			break
		}
		out = append(out, s[:i+1])
		s = s[i+1:]
	}
	return out
}

// component is a run of equal, added or removed tokens.
type component struct {
	count          int
	added, removed bool
	tokens         []string
	prev           *component
}

// lines returns the component's tokens without their trailing newline.
func (c *component) lines() []string {
	out := make([]string, len(c.tokens))
	for i, t := range c.tokens {
		out[i] = strings.TrimSuffix(t, "\n")
	}
	return out
}

type diffPath struct {
	oldPos int
	last   *component
}

// diffLines is the Myers O(ND) diff as jsdiff implements it: diagonals are
// oldPos-newPos, on a tie the path that removes is extended, and the search
// window shrinks once a path reaches either end.
func diffLines(oldT, newT []string) []component {
	oldLen, newLen := len(oldT), len(newT)
	best := map[int]*diffPath{0: {oldPos: -1}}
	newPos := extractCommon(best[0], newT, oldT, 0)
	if best[0].oldPos+1 >= oldLen && newPos+1 >= newLen {
		return buildValues(best[0].last, newT, oldT)
	}
	minD, maxD := math.MinInt, math.MaxInt
	for edit := 1; edit <= oldLen+newLen; edit++ {
		for d := max(minD, -edit); d <= min(maxD, edit); d += 2 {
			removePath, addPath := best[d-1], best[d+1]
			if removePath != nil {
				best[d-1] = nil
			}
			canAdd := false
			if addPath != nil {
				addNewPos := addPath.oldPos - d
				canAdd = 0 <= addNewPos && addNewPos < newLen
			}
			canRemove := removePath != nil && removePath.oldPos+1 < oldLen
			if !canAdd && !canRemove {
				best[d] = nil
				continue
			}
			var base *diffPath
			if !canRemove || (canAdd && removePath.oldPos < addPath.oldPos) {
				base = addToPath(addPath, true, false, 0)
			} else {
				base = addToPath(removePath, false, true, 1)
			}
			newPos = extractCommon(base, newT, oldT, d)
			if base.oldPos+1 >= oldLen && newPos+1 >= newLen {
				return buildValues(base.last, newT, oldT)
			}
			best[d] = base
			if base.oldPos+1 >= oldLen {
				maxD = min(maxD, d-1)
			}
			if newPos+1 >= newLen {
				minD = max(minD, d+1)
			}
		}
	}
	return nil // unreachable: edit = oldLen+newLen always reaches the end
}

func addToPath(p *diffPath, added, removed bool, oldPosInc int) *diffPath {
	last := p.last
	if last != nil && last.added == added && last.removed == removed {
		return &diffPath{oldPos: p.oldPos + oldPosInc, last: &component{count: last.count + 1, added: added, removed: removed, prev: last.prev}}
	}
	return &diffPath{oldPos: p.oldPos + oldPosInc, last: &component{count: 1, added: added, removed: removed, prev: last}}
}

func extractCommon(p *diffPath, newT, oldT []string, d int) int {
	oldPos := p.oldPos
	newPos := oldPos - d
	common := 0
	for newPos+1 < len(newT) && oldPos+1 < len(oldT) && oldT[oldPos+1] == newT[newPos+1] {
		newPos++
		oldPos++
		common++
	}
	if common > 0 {
		p.last = &component{count: common, prev: p.last}
	}
	p.oldPos = oldPos
	return newPos
}

// buildValues turns the component chain into slices of tokens, removals
// ordered before the additions they replace.
func buildValues(last *component, newT, oldT []string) []component {
	var rev []*component
	for c := last; c != nil; c = c.prev {
		rev = append(rev, c)
	}
	comps := make([]component, len(rev))
	for i, c := range rev {
		comps[len(rev)-1-i] = component{count: c.count, added: c.added, removed: c.removed}
	}
	newPos, oldPos := 0, 0
	for i := range comps {
		c := &comps[i]
		if !c.removed {
			c.tokens = newT[newPos : newPos+c.count]
			newPos += c.count
			if !c.added {
				oldPos += c.count
			}
			continue
		}
		c.tokens = oldT[oldPos : oldPos+c.count]
		oldPos += c.count
		if i > 0 && comps[i-1].added {
			comps[i-1], comps[i] = comps[i], comps[i-1]
		}
	}
	return comps
}
