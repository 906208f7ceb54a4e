package instructions

import (
	"fmt"
	"path"
	"strings"
)

// The frame and intros (VERBATIM).
const (
	reminderOpen  = "<system-reminder>"
	reminderClose = "</system-reminder>"
	// Intro opens a baseline.
	Intro             = "The following workspace instructions may be relevant to your work. Use them as guidance when applicable. More specific instructions take precedence over broader ones. They do not override system, developer, or direct user instructions."
	replacementIntro  = "This complete workspace instruction baseline replaces all earlier workspace instruction baselines. " + Intro
	emptyReplacement  = "This complete workspace instruction baseline replaces all earlier workspace instruction baselines. No workspace instructions are currently active."
	compactIntro      = "Workspace instructions were omitted or truncated to fit the configured byte budget."
	escapedCloseFrame = `<\/system-reminder>`
)

// File is one loaded instruction file.
type File struct {
	// AbsolutePath identifies it ("removed:<scope>" for a removal).
	AbsolutePath string
	// DisplayPath is the path the model reads: project-root relative, or
	// the user-global file's "$DSH_HOME/" path.
	DisplayPath string
	// Content is its text.
	Content string
}

// style is how a message renders: its intro and each file's section.
type style struct {
	intro   string
	section func(File) string
}

func baselineStyle(files []File, replace bool) style {
	s := style{intro: Intro, section: func(f File) string { return "Instructions from: " + f.DisplayPath + "\n\n" + f.Content }}
	if replace {
		s.intro = replacementIntro
		if len(files) == 0 {
			s.intro = emptyReplacement
		}
	}
	return s
}

// scopeDir is the directory a display path's instructions apply to.
func scopeDir(displayPath string) string {
	if displayPath == userGlobalDisplay {
		return userGlobalDir
	}
	return path.Dir(displayPath)
}

func additionalSection(f File) string {
	return strings.Join([]string{
		"Additional instructions from: " + f.DisplayPath, "",
		"These instructions apply to work under `" + scopeDir(f.DisplayPath) + "`. Use them as guidance when relevant; more specific instructions take precedence. They do not override system, developer, or direct user instructions.", "",
		f.Content,
	}, "\n")
}

func changeSection(c Change, f File) string {
	switch c.Action {
	case "set":
		return additionalSection(f)
	case "remove":
		return "Instructions removed: " + c.Path + "\n\nThe previously loaded instructions from this file no longer apply."
	}
	return strings.Join([]string{
		"Updated instructions from: " + c.Path, "",
		"This file changed after it was loaded. Use the following content instead of the previously loaded instructions from this file.", "",
		f.Content,
	}, "\n")
}

// truncation says how much of a file a message kept.
type truncation struct {
	displayPath         string
	originalBytes, kept int
}

func markerText(maxBytes int, omitted []File, truncated []truncation) string {
	var parts []string
	if len(omitted) > 0 {
		names := make([]string, len(omitted))
		for i, f := range omitted {
			names[i] = f.DisplayPath
		}
		parts = append(parts, "omitted "+strings.Join(names, ", "))
	}
	if len(truncated) > 0 {
		items := make([]string, len(truncated))
		for i, t := range truncated {
			items[i] = fmt.Sprintf("%s from %d to %d bytes", t.displayPath, t.originalBytes, t.kept)
		}
		parts = append(parts, "truncated "+strings.Join(items, ", "))
	}
	if len(parts) == 0 {
		return ""
	}
	return fmt.Sprintf("Workspace instruction budget %d bytes: %s", maxBytes, strings.Join(parts, "; "))
}

func escapeFrame(body string) string {
	return strings.ReplaceAll(body, reminderClose, escapedCloseFrame)
}

func buildText(files []File, maxBytes int, omitted []File, truncated []truncation, s style) string {
	var blocks []string
	for _, b := range append([]string{markerText(maxBytes, omitted, truncated), s.intro}, sections(files, s)...) {
		if b != "" {
			blocks = append(blocks, b)
		}
	}
	return reminderOpen + "\n" + escapeFrame(strings.Join(blocks, "\n\n")) + "\n" + reminderClose
}

func sections(files []File, s style) []string {
	out := make([]string, len(files))
	for i, f := range files {
		out[i] = s.section(f)
	}
	return out
}

// truncateUTF8 cuts s to at most maxBytes bytes on a character boundary.
func truncateUTF8(s string, maxBytes int) string {
	if len(s) <= maxBytes {
		return s
	}
	end := max(0, maxBytes)
	for end > 0 && s[end]&0xc0 == 0x80 {
		end--
	}
	return s[:end]
}

// rendered is a message's text and the files it represents.
type rendered struct {
	text        string
	represented []File
}

// render fits files (broadest first) into maxBytes: all of them; else the
// broadest dropped one by one; else the most specific alone, cut to fit
// (with the intro, then with the compact intro); else the budget line.
func render(files []File, maxBytes int, s style) rendered {
	if maxBytes <= 0 {
		return rendered{}
	}
	if full := buildText(files, maxBytes, nil, nil, s); len(full) <= maxBytes {
		return rendered{full, files}
	}
	for start := 1; start < len(files); start++ {
		if text := buildText(files[start:], maxBytes, files[:start], nil, s); len(text) <= maxBytes {
			return rendered{text, files[start:]}
		}
	}
	if len(files) == 0 {
		return rendered{}
	}
	last := files[len(files)-1]
	omitted := files[:len(files)-1]
	for _, st := range []style{s, {intro: compactIntro, section: s.section}} {
		cut := truncateToFit(last, maxBytes, omitted, st)
		tr := []truncation{{last.DisplayPath, len(last.Content), len(cut.Content)}}
		if text := buildText([]File{cut}, maxBytes, omitted, tr, st); len(text) <= maxBytes {
			var rep []File
			if len(cut.Content) > 0 || len(last.Content) == 0 {
				rep = []File{last}
			}
			return rendered{text, rep}
		}
	}
	tr := []truncation{{last.DisplayPath, len(last.Content), 0}}
	notice := escapeFrame(markerText(maxBytes, omitted, tr))
	empty := last
	empty.Content = ""
	if withHeading := escapeFrame(notice + "\n\n" + s.section(empty)); len(withHeading) <= maxBytes {
		var rep []File
		if len(last.Content) == 0 {
			rep = []File{last}
		}
		return rendered{withHeading, rep}
	}
	return rendered{truncateUTF8(notice, maxBytes), nil}
}

// truncateToFit is the longest cut of f's text whose message fits.
func truncateToFit(f File, maxBytes int, omitted []File, s style) File {
	lo, hi := 0, len(f.Content)
	best := f
	best.Content = ""
	for lo <= hi {
		mid := (lo + hi) / 2
		cand := f
		cand.Content = truncateUTF8(f.Content, mid)
		tr := []truncation{{f.DisplayPath, len(f.Content), len(cand.Content)}}
		if len(buildText([]File{cand}, maxBytes, omitted, tr, s)) <= maxBytes {
			best, lo = cand, mid+1
		} else {
			hi = mid - 1
		}
	}
	return best
}

// item is one change with the file behind it.
type item struct {
	change Change
	file   File
}

// renderChanges renders a projection's changes and returns the changes its
// text represents.
func renderChanges(items []item, maxBytes int) (string, []Change) {
	byPath := map[string]Change{}
	files := make([]File, len(items))
	for i, it := range items {
		byPath[it.file.AbsolutePath] = it.change
		files[i] = it.file
	}
	r := render(files, maxBytes, style{section: func(f File) string { return changeSection(byPath[f.AbsolutePath], f) }})
	kept := map[string]bool{}
	for _, f := range r.represented {
		kept[f.AbsolutePath] = true
	}
	var changes []Change
	for _, it := range items {
		if kept[it.file.AbsolutePath] {
			changes = append(changes, it.change)
		}
	}
	return r.text, changes
}
